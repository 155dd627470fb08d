// Package anthropic reads the wire format of the Anthropic Messages API.
package anthropic
