package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// Each detector on the forms it finds and on what only looks like them.
func TestDetectors(t *testing.T) {
	r := redact.New()
	tests := []struct{ in, want string }{
		// Email addresses.
		{"write to jane.doe+work@example.co.uk today", "write to [EMAIL] today"},
		{"<Sofia.Bernard@web.de>", "<[EMAIL]>"},
		{"mailto:ops@acme-corp.io.", "mailto:[EMAIL]."},
		{"JOSÉ.garcía@correo.es", "[EMAIL]"},
		{"npm i react@18.2.0 and @types/node@20.1.0", "npm i react@18.2.0 and @types/node@20.1.0"},
		{"git clone git@github.com:acme/api.git", "git clone git@github.com:acme/api.git"},
		{"@app.route and user@localhost", "@app.route and user@localhost"},

		// Phone numbers.
		{"call +44 20 7946 0958.", "call [PHONE]."},
		{"+1 (415) 555-2671, (415) 555-2671, 415.555.2671, 1-800-555-0199", "[PHONE], [PHONE], [PHONE], [PHONE]"},
		{"+14155552671 and +33 6 12 34 56 78 and +49 (0)30 1234567", "[PHONE] and [PHONE] and [PHONE]"},
		{"020 7946 0958 / 07700 900123 / 01 23 45 67 89 / 030 12345678", "[PHONE] / [PHONE] / [PHONE] / [PHONE]"},
		{"0044 20 7946 0958", "[PHONE]"},
		{"phone: 4155552671", "phone: [PHONE]"},
		{"Name,+1 764 555 0101,Berlin", "Name,[PHONE],Berlin"},
		{"call 415 555 2671 2 times", "call [PHONE] 2 times"},
		{"PO 4235895080; ts 1710498600; 2024-03-15 10:30:00", "PO 4235895080; ts 1710498600; 2024-03-15 10:30:00"},
		{"ref 963 812 3953, order 415-555-2671", "ref 963 812 3953, order 415-555-2671"},
		{"ISBN 978-3-16-148410-0, 1,234,567 EUR, 112-4837261-9922913", "ISBN 978-3-16-148410-0, 1,234,567 EUR, 112-4837261-9922913"},
		{"v1.2.3 and 10.0.19045.2965", "v1.2.3 and 10.0.19045.2965"},

		// Payment cards: Luhn, a network's prefix and length.
		{"card 4111 1111 1111 1111 exp 09/27", "card [CARD] exp 09/27"},
		{"4111-1111-1111-1111, 4111.1111.1111.1111, 378282246310005, 3782 822463 10005", "[CARD], [CARD], [CARD], [CARD]"},
		{"5555555555554444 6011111111111117", "[CARD] [CARD]"},
		{"4111 1111 1111 1112 fails Luhn", "4111 1111 1111 1112 fails Luhn"},
		{"1700000000123 is a timestamp, 9400100000000000000000 a parcel", "1700000000123 is a timestamp, 9400100000000000000000 a parcel"},
		{"GB37 WEST 6670 3410 5807 40", "GB37 WEST 6670 3410 5807 40"},

		// IBANs: length and checksum.
		{"IBAN GB82 WEST 1234 5698 7654 32.", "IBAN [IBAN]."},
		{"DE89370400440532013000 and gb82west12345698765432", "[IBAN] and [IBAN]"},
		{"GB82 WEST 1234 5698 7654 33 has a bad checksum", "GB82 WEST 1234 5698 7654 33 has a bad checksum"},

		// IP addresses.
		{"from 203.0.113.7:8443 and 10.1.2.3", "from [IP]:8443 and [IP]"},
		{"[2001:db8::ff00:42:8329]:443, fe80::1%eth0, 2001:db8:3e64:e1af::f2dd:54761", "[[IP]]:443, [IP]%eth0, [IP]:54761"},
		{"127.0.0.1, 0.0.0.0, ::1, 255.255.255.0", "127.0.0.1, 0.0.0.0, ::1, 255.255.255.0"},
		{"version 1.2.3.4, OID 1.3.6.1.4.1.311, 10:30:45, 00:1a:2b:3c:4d:5e", "version 1.2.3.4, OID 1.3.6.1.4.1.311, 10:30:45, 00:1a:2b:3c:4d:5e"},
		{"std::vector and a::b", "std::vector and a::b"},

		// Secrets.
		{"key sk-proj-Abc123def456GHI789jkl012 end", "key [SECRET] end"},
		{"AKIAIOSFODNN7EXAMPLE", "[SECRET]"},
		{"xoxb-123456789012-AbCdEfGhIjKl and AIzaSyA1234567890abcdefghijklmnopqrstu", "[SECRET] and [SECRET]"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt [SECRET]"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- done", "[SECRET] done"},
		{"password: Tr0ub4dor&3 and DB_PASSWORD=s3cret-9 and api_key=Xy12abcd&user=bob", "password: [SECRET] and DB_PASSWORD=[SECRET] and api_key=[SECRET]&user=bob"},
		{"my password is sunflower77", "my password is [SECRET]"},
		{"the password is required; max_tokens=1024", "the password is required; max_tokens=1024"},
		{"random wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY end", "random [SECRET] end"},
		{"getUserAccountBalanceV2 src/main/java/com/acme/UserService2Impl", "getUserAccountBalanceV2 src/main/java/com/acme/UserService2Impl"},
		{"3f2504e0-4f89-11d3-9a0c-0305e82c3301 9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab", "3f2504e0-4f89-11d3-9a0c-0305e82c3301 9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab"},
		{"call_9sTxQ2bLr8VvUa1Kf3hG0yNp and trace dZnosJkoxeqOqBTkmHLzQqBpL5j", "call_9sTxQ2bLr8VvUa1Kf3hG0yNp and trace dZnosJkoxeqOqBTkmHLzQqBpL5j"},
		{"01HRZ3K5Q8V4N2M7P9T6X1Y0WB", "01HRZ3K5Q8V4N2M7P9T6X1Y0WB"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, r.String(tt.in), "%q", tt.in)
	}
}

// In JSON, what a value is named says more: an identifier's field keeps
// its random value, a password's field loses its whole value, a bare
// number under "phone" is a phone number.
func TestJSONFields(t *testing.T) {
	r := redact.New()
	in := `{"id":"call_x","tool_call_id":"Zx9Qm2Lp7Vt4Rk8Ws3Yn6Bh1","thoughtSignature":"Zx9Qm2Lp7Vt4Rk8Ws3Yn6Bh1",` +
		`"note":"Zx9Qm2Lp7Vt4Rk8Ws3Yn6Bh1","password":"hunter","phone":4155552671,"card":-4111111111111111,"n":[4111111111111111, 12]}`
	want := `{"id":"call_x","tool_call_id":"Zx9Qm2Lp7Vt4Rk8Ws3Yn6Bh1","thoughtSignature":"Zx9Qm2Lp7Vt4Rk8Ws3Yn6Bh1",` +
		`"note":"[SECRET]","password":"[SECRET]","phone":"[PHONE]","card":"[CARD]","n":["[CARD]", 12]}`
	got := r.Bytes([]byte(in))
	assert.Equal(t, want, string(got))
	assert.True(t, json.Valid(got))
}

// Escapes are read: a value written with them is found, and replaced
// with its escapes, so the JSON stays valid and nothing of it is left.
func TestJSONEscapes(t *testing.T) {
	r := redact.New()
	for _, tt := range []struct{ in, want string }{
		{`["jane\u0040example.com"]`, `["[EMAIL]"]`},
		{`["line\njane@example.com\tend"]`, `["line\n[EMAIL]\tend"]`},
		{`["\"jane@example.com\" said \u00e9"]`, `["\"[EMAIL]\" said \u00e9"]`},
		{`["\ud83d\ude00 +44 20 7946 0958 \ud83d"]`, `["\ud83d\ude00 [PHONE] \ud83d"]`},
		{`{"k\u0065y":"v"}`, `{"k\u0065y":"v"}`},
	} {
		got := r.Bytes([]byte(tt.in))
		assert.Equal(t, tt.want, string(got), tt.in)
		assert.True(t, json.Valid(got), "%s", got)
	}
}

// With a key, a mark carries a hash of the value: the same for one value
// however it is written, another for another value, another under
// another key.
func TestKeyedMarks(t *testing.T) {
	a := redact.New(redact.WithKey([]byte("k1")))
	got := a.String("Jane@Example.com, jane@example.com, bob@example.com; +44 20 7946 0958 and +44 (0)20-7946-0958")
	parts := strings.FieldsFunc(got, func(r rune) bool { return r == ',' || r == ';' || r == ' ' })
	require.Len(t, parts, 6, got)
	assert.Regexp(t, `^\[EMAIL:[0-9a-f]{6}\]$`, parts[0])
	assert.Equal(t, parts[0], parts[1], "one address, two casings: one mark")
	assert.NotEqual(t, parts[0], parts[2], "two addresses: two marks")
	assert.Regexp(t, `^\[PHONE:[0-9a-f]{6}\]$`, parts[3])

	b := redact.New(redact.WithKey([]byte("k2")))
	assert.NotEqual(t, parts[0], b.String("jane@example.com"), "another key, another mark")
	assert.Equal(t, "[EMAIL]", redact.New(redact.WithKey(nil)).String("jane@example.com"), "no key: no hash")
}

func TestOnly(t *testing.T) {
	r := redact.New(redact.Only(redact.Email))
	assert.Equal(t, "[EMAIL] +44 20 7946 0958 4111111111111111", r.String("jane@example.com +44 20 7946 0958 4111111111111111"))
}

// Nothing found: the input itself comes back, not a copy.
func TestCleanInputIsReturned(t *testing.T) {
	r := redact.New()
	in := []byte(`{"messages":[{"role":"user","content":"What is the weather in Paris on 2024-03-15?"}]}`)
	out := r.Bytes(in)
	assert.Equal(t, &in[0], &out[0])
	s := "nothing to see"
	assert.Equal(t, s, r.String(s))
}

// PII redacts every field of a record that holds what someone wrote or
// the model said, and leaves the caller's maps and slices alone.
func TestPIIRecord(t *testing.T) {
	tags := []string{"support", "jane@example.com"}
	meta := map[string]string{"customer": "jane@example.com", "plan": "pro"}
	rec := record.Record{
		CallID:        "c1",
		UserID:        "u-42",
		Args:          json.RawMessage(`[{"role":"user","content":"I am jane@example.com"}]`),
		Kwargs:        json.RawMessage(`{"user":"+44 20 7946 0958"}`),
		ErrorMessage:  "card 4111 1111 1111 1111 declined",
		ProgramSource: "send('jane@example.com')",
		Output: &record.Message{Role: record.RoleAssistant, Parts: []record.Part{
			{Type: record.PartReasoning, Content: "The user gave 203.0.113.7."},
			{Type: record.PartText, Content: "Sure, I will write to jane@example.com."},
			{Type: record.PartToolCall, ID: "call_1", Name: "email", Arguments: json.RawMessage(`{"to":"jane@example.com"}`)},
		}},
		Tags:     tags,
		Metadata: meta,
	}
	redact.PII()(&rec)
	all := string(rec.AppendJSON(nil))
	for _, v := range []string{"jane@example.com", "7946", "4111", "203.0.113.7"} {
		assert.NotContains(t, all, v)
	}
	assert.JSONEq(t, `[{"role":"user","content":"I am [EMAIL]"}]`, string(rec.Args))
	assert.Equal(t, "u-42", rec.UserID, "the user id is how a history is found: kept")
	assert.Equal(t, "call_1", rec.Output.Parts[2].ID)
	assert.Equal(t, "Sure, I will write to [EMAIL].", rec.Output.Text())
	assert.Equal(t, []string{"support", "[EMAIL]"}, rec.Tags)
	assert.Equal(t, map[string]string{"customer": "[EMAIL]", "plan": "pro"}, rec.Metadata)
	assert.Equal(t, "jane@example.com", tags[1], "the caller's tags are not written to")
	assert.Equal(t, "jane@example.com", meta["customer"], "the caller's metadata is not written to")
}

// FuzzBytes: any input is redacted without a panic and left unchanged;
// valid JSON comes out valid JSON; a second pass finds nothing more.
func FuzzBytes(f *testing.F) {
	for _, s := range []string{
		`{"a":"jane@example.com","n":4111111111111111,"m":-4111111111111111}`,
		`["\u0040x.com jane\u0040example.com","+44 20 7946 0958",[5555555555554444]]`,
		`data: {"choices":[{"delta":{"content":"call 415-555-2671"}}]}` + "\n\n",
		`{"password":"pw12345","phone":4155552671,"id":"Zx9Qm2Lp7Vt4Rk8Ws3Yn6Bh1"}`,
		"plain text with sk-abcdefghijklmnopqrstuvwxyz and 2001:db8::1 and GB82 WEST 1234 5698 7654 32",
		`"unterminated jane@example.com`, `\"`, `"\u12`, "",
	} {
		f.Add([]byte(s))
	}
	keyed := redact.New(redact.WithKey([]byte("fuzz")))
	plain := redact.New()
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, r := range []*redact.Redactor{plain, keyed} {
			orig := string(in)
			out := r.Bytes(in)
			if string(in) != orig {
				t.Fatalf("Bytes changed its input")
			}
			if json.Valid(in) && !json.Valid(out) {
				t.Fatalf("valid JSON in, invalid out:\nin:  %s\nout: %s", in, out)
			}
			if again := r.Bytes(out); string(again) != string(out) {
				t.Fatalf("a second pass changed it:\nin:   %q\nout:  %q\nagain: %q", in, out, again)
			}
		}
	})
}

// A stream splits values across its events, a few characters each: they
// are found all the same, marked in the event where they start, and
// taken out of the others; each event stays valid JSON.
func TestFramesAcrossEvents(t *testing.T) {
	event := func(s string) []byte {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": s}}}})
		return []byte("data: " + string(b) + "\n\n")
	}
	frames := [][]byte{event("Write to ja"), event("ne@exam"), event("ple.com or call +44 20 "), event("7946 0958."), []byte("data: [DONE]\n\n")}
	orig := make([][]byte, len(frames))
	for i, f := range frames {
		orig[i] = append([]byte(nil), f...)
	}
	r := redact.New(redact.WithKey([]byte("k")))
	got := r.Frames(frames)
	assert.Equal(t, orig, frames, "the frames given are not changed")

	var text strings.Builder
	for _, f := range got[:4] {
		payload := strings.TrimSuffix(strings.TrimPrefix(string(f), "data: "), "\n\n")
		var v struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal([]byte(payload), &v), "%s", f)
		text.WriteString(v.Choices[0].Delta.Content)
	}
	assert.Equal(t, "Write to "+r.String("jane@example.com")+" or call "+r.String("+44 20 7946 0958")+".", text.String())
	assert.Equal(t, "data: [DONE]\n\n", string(got[4]))

	clean := [][]byte{event("Hello"), event(" world")}
	assert.Equal(t, &clean[0], &r.Frames(clean)[0], "nothing found: the frames themselves")
}

// FuzzFrames: a text streamed in pieces of any sizes comes out as events
// that are each valid JSON.
func FuzzFrames(f *testing.F) {
	f.Add("Write to jane@example.com or +44 20 7946 0958, card 4111 1111 1111 1111", uint64(0x0305070b0d))
	f.Add(`"quoted \u0040 \\ jane\u0040example.com"`, uint64(1))
	r := redact.New()
	f.Fuzz(func(t *testing.T, text string, cuts uint64) {
		var frames [][]byte
		for rest := text; len(rest) > 0; cuts >>= 4 {
			n := min(len(rest), int(cuts&15)+1)
			b, _ := json.Marshal(map[string]any{"delta": map[string]string{"text": rest[:n]}})
			frames = append(frames, append(append([]byte("data: "), b...), "\n\n"...))
			rest = rest[n:]
		}
		for i, fr := range r.Frames(frames) {
			payload := strings.TrimSuffix(strings.TrimPrefix(string(fr), "data: "), "\n\n")
			if !json.Valid([]byte(payload)) {
				t.Fatalf("frame %d is no longer JSON: %q (was %q)", i, fr, frames[i])
			}
		}
	})
}
