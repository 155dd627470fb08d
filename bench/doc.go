// Package bench compares the recorder with a bare transport and with
// otelhttp on one loopback server. It is its own module so that otelhttp
// and the OpenTelemetry SDK stay out of the library's dependencies.
//
// Run it from this directory:
//
//	go test -run '^$' -bench . -count 10 > new.txt
//	benchstat -col /transport new.txt
package bench
