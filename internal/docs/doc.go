// Package docs holds the checks of the repository's Markdown and test
// data: every relative link resolves (to a file, and to a heading when it
// names one); the README stays a newcomer's first screen, under
// [MaxREADMELines] lines; testdata/README.md lists every file of the
// shared corpus at the top, and every payload keeps the bytes its sha256
// says; and no file under any testdata/ is a copy of another (fuzz
// corpora aside). It has no code of its own but the checks; go test runs
// them.
package docs

// MaxREADMELines bounds the README: the reference lives in package docs
// and docs/, where Go users look for it.
const MaxREADMELines = 250
