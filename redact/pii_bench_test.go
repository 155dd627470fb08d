package redact_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/internal/benchdata"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// benchRecord is the record the recorder makes of bench/'s call (a 4 KiB
// chat request and its 4 KiB answer, internal/benchdata), output kept.
func benchRecord(b *testing.B) record.Record {
	rec := middleware.NewRecorder()
	defer rec.Close()
	client := &http.Client{Transport: middleware.Chain(benchdata.JSON, rec.Middleware())}
	resp, err := client.Post("http://api.example/v1/chat/completions", "application/json", bytes.NewReader(benchdata.Request))
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	rec.Flush()
	rs := rec.History().Records()
	if len(rs) != 1 {
		b.Fatalf("%d records", len(rs))
	}
	return rs[0]
}

// BenchmarkPII is what redact.PII costs a record of bench/'s call: the
// recorder's worker pays it once per call, after the call returned
// (middleware's BenchmarkRedactor measures it in the recorder).
func BenchmarkPII(b *testing.B) {
	r := benchRecord(b)
	for _, opt := range []struct {
		name string
		opts []redact.Option
	}{
		{"plain", nil},
		{"keyed", []redact.Option{redact.WithKey([]byte("bench"))}},
	} {
		pii := redact.PII(opt.opts...)
		b.Run("marks="+opt.name, func(b *testing.B) {
			b.SetBytes(int64(len(r.Args) + len(r.Kwargs) + len(r.Output.Text())))
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				c := r
				pii(&c)
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkPIIPlanted is the record of BenchmarkPII with an email, a
// phone number and a card number in its last turn: what replacing costs.
func BenchmarkPIIPlanted(b *testing.B) {
	r := benchRecord(b)
	r.Args = bytes.Replace(r.Args, []byte(`"content":"`), []byte(`"content":"Reach me at jane@example.com or +44 20 7946 0958, card 4111 1111 1111 1111. `), 1)
	pii := redact.PII(redact.WithKey([]byte("bench")))
	b.SetBytes(int64(len(r.Args) + len(r.Kwargs) + len(r.Output.Text())))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		c := r
		pii(&c)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU the process has used: what a benchmark spends,
// whatever else the machine runs meanwhile.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBytesCrowded is redaction of text crowded with what starts a
// value or looks like one, at two sizes: the time per byte must not grow
// with the size (cpu-ns/B: the CPU per byte, steadier than the time on a
// shared machine).
func BenchmarkBytesCrowded(b *testing.B) {
	r := redact.New()
	for _, unit := range []string{"1 ", "+1 ", "a@b.", "1.1.", "ab:", "eyJaaaaaaaaaaaa.", "Zx9Qm2Lp7Vt4Rk8Ws3Yn6Bh1 ", "(1) ", `"\u0040`, "password:x "} {
		for _, size := range []int{16 << 10, 64 << 10} {
			in := []byte(strings.Repeat(unit, size/len(unit)))
			b.Run(fmt.Sprintf("unit=%q/size=%dKiB", unit, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				cpu0 := cpuTime()
				for b.Loop() {
					r.Bytes(in)
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(len(in)), "cpu-ns/B")
			})
		}
	}
}
