// Package view serves a local web viewer for llmhistory records.
package view
