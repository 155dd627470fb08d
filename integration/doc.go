// Package integration holds the tests whose point is the OpenTelemetry
// Collector's own OTLP receiver (go.opentelemetry.io/collector/...): the
// SDK's exporters and otelsink, the Collector configuration that
// docs/opentelemetry.md shows, and the built llmhistory command's export,
// each against the receiver a team runs. It is its own module so that the
// Collector's 190-odd packages stay out of the library's dependencies and
// out of the first go test ./... of a fresh clone; the root module's tests
// use a light OTLP receiver (internal/otlpfake) where the receiver is not
// the point.
//
// Run it from the repository's root with
//
//	go -C integration test ./...
//
// CI (.ci/run) runs it as it runs the root module: tidy, vet,
// staticcheck, go test -race.
package integration
