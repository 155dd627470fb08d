// Package docs holds the checks of the repository's Markdown: every
// relative link resolves (to a file, and to a heading when it names one),
// and the README stays a newcomer's first screen, under [MaxREADMELines]
// lines. It has no code of its own but the checks; go test runs them.
package docs

// MaxREADMELines bounds the README: the reference lives in package docs
// and docs/, where Go users look for it.
const MaxREADMELines = 250
