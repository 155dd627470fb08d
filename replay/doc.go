// Package replay records an application's calls to an LLM provider into a
// cassette once, and replays them in tests: offline, in milliseconds, the
// same every run, streams and retries included.
//
// A [Cassette] is an [http.RoundTripper]. Give it to the SDK's HTTP client,
// with the recorder outside it so that a replayed call is recorded like a
// live one and a test can assert on the history too:
//
//	func TestAgent(t *testing.T) {
//		cassette := replay.ForTest(t, "testdata/agent.jsonl") // closed (and, when recording, written) at the end
//		rec := middleware.NewRecorder()
//		defer rec.Close()
//		cfg := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY")) // go-openai; no key needed to replay
//		cfg.HTTPClient = middleware.NewClient(nil, rec.Middleware(), cassette.Middleware())
//		answer, err := NewAgent(openai.NewClientWithConfig(cfg)).Ask(ctx, "What's the weather in Paris?")
//		...
//	}
//
// genai, openai-go and the Anthropic SDK take the client the same way.
// [New] opens a cassette outside tests; [Cassette.Close] writes a
// recording. The program in examples/replay is an agent (ask, call a
// tool, ask again streamed) with such a test and its committed cassette.
//
// # Modes
//
//   - [ModeReplay] answers every request from the cassette and never touches
//     the network. A request with no recorded answer fails with a
//     [*MissError], and so does New for a missing cassette
//     ([ErrNoCassette], saying how to record it): CI without keys never
//     calls a provider. The default.
//   - [ModeRecord] calls the provider for every request and replaces the
//     cassette at Close.
//   - [ModeOnce] replays what the cassette holds and records what it does not.
//   - [ModePassthrough] calls the provider and leaves the cassette alone.
//
// The mode is [WithMode]'s, else the LLMHISTORY_REPLAY environment
// variable's ([EnvMode]: replay, record, once or passthrough), else replay.
// [WithPassthrough] sends the requests a function picks to the network in
// every mode, neither matched nor recorded: a service of the test's own
// next to a replayed provider.
//
// # The cassette
//
// A cassette is a JSON Lines file a person can read and diff: one HTTP
// exchange per line, each line carrying the format version (a line of a
// newer version is refused with [ErrUnsupportedVersion]). A line holds the
// request (method, URL, the headers that say what was asked, the body) and
// the exact response (status, headers, body), with the response's latency:
//
//	{"version":1,"request":{"method":"POST","url":"https://api.openai.com/v1/chat/completions",
//	 "headers":{"Content-Type":"application/json"},"body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}},
//	 "response":{"status":200,"headers":{"Content-Type":"application/json","X-Request-Id":"req_1"},"content_length":187,
//	 "body":{"id":"chatcmpl-1","object":"chat.completion","choices":[...]},"body_indent":"  ","body_tail":"\n",
//	 "sha256":"5f0c…"},"latency_ms":412.337}
//
// (shown on several lines here). A JSON body is stored as JSON, not as an
// escaped string, and laid out again on load exactly as it was sent
// (body_indent, body_spaced, body_tail); other text is stored as
// body_text, and bytes that are not UTF-8 as body_base64. A stream is
// stored as its frames, each with its offset from the start of the
// response:
//
//	"frames":[{"at_ms":211.5,"data":{"id":"chatcmpl-2","object":"chat.completion.chunk",...}},
//	          {"at_ms":236.1,"event":"content_block_delta","data":{...}},
//	          {"at_ms":980.2,"text":"data: [DONE]\n\n"}]
//
// Each response carries the sha256 of its body (of a stream: of each
// frame's length and bytes), so a line edited by hand, or mangled by a
// merge, fails to load with a [*LineError] naming the line; so do a
// truncated line and malformed JSON. [Read] and [Write] load and write
// cassettes on their own. A file is written whole, through a temporary
// file renamed over it: a crash leaves the old cassette or the new one.
//
// # Matching
//
// A request is answered by a recorded one with the same method, URL path
// and query (secret parameters left out; the host is not compared, so a
// cassette recorded against one base URL replays against any) and the same
// body:
//
//   - two JSON bodies are compared as JSON: key order and spacing do not
//     matter, and numbers are compared as numbers (1, 1.0 and 1e0 are
//     equal);
//   - two multipart bodies (a file upload: go-openai's CreateTranscription)
//     are compared part by part, every part header (field and file names,
//     content types) and every part's content, the boundary the client
//     draws at random for each request left out; a difference names the
//     part ("body.parts.1.content");
//   - other bodies are compared byte for byte.
//
// Headers are not compared unless named with [WithMatchedHeaders] (a
// multipart Content-Type without its boundary). Fields that change every
// run are left out with [WithIgnoredFields] (gjson-style paths: "user",
// "seed", "metadata.request_id", "messages.#.name"), query parameters
// with [WithIgnoredQuery], and [WithMatcher] replaces the comparison
// altogether, given the default one to build on. Matching costs about the
// same per call whatever the cassette's length: recorded requests equal in
// all that matching looks at are grouped, and a request is compared only
// with the groups that share its hash (a WithMatcher function is still
// asked about every recorded request).
//
// Identical requests are answered in the order they were recorded: the
// Nth identical request gets the Nth recorded answer. One more is a
// [*MissError], because the code now makes a call it did not make when the
// cassette was recorded (an agent looping once more, a retry that did not
// happen). [WithRepeatLast] repeats the last answer instead, for polling;
// [WithReplayableInteractions] gives all the answers again, in turn, for a
// call made any number of times.
//
// A miss says why. The [*MissError] names the closest recorded request
// (the same method and path first, then the fewest differences) and lists
// the differences, each JSON leaf by its path, recorded against got. Long
// values are shown from just before where they differ, an ellipsis
// marking each cut, so a change in the middle of a long system prompt
// shows (one line per difference, cut in two here):
//
//	replay: no recorded answer for POST /v1/chat/completions (cassette testdata/agent.jsonl, mode replay)
//	  closest: interaction 1 (line 2), POST /v1/chat/completions, 2 difference(s):
//	    body.messages.0.content: recorded …"itely. Refunds take 14 days. Never invent an order number. Never invent an orde…,
//	      got …"itely. Refunds take 30 days. Never invent an order number. Never invent an orde…
//	    body.temperature: recorded 0.2, got (absent)
//	  if the change is intended, re-record: LLMHISTORY_REPLAY=record (every call) or LLMHISTORY_REPLAY=once (what is missing)
//
// It is the RoundTrip's error, so the SDK returns it: errors.As(err,
// &miss) works through go-openai, openai-go, genai and the Anthropic SDK.
// (openai-go and the Anthropic SDK retry what they take for a connection
// failure, a miss included: give them option.WithMaxRetries(0) in tests
// and a miss is reported at once.)
//
// # Streams
//
// A stream is replayed as a stream: frame by frame, each frame given by
// Reads of its own and never merged with the next, so an SDK's Recv loop,
// its stream accumulator and the recorder's stream parsing run as they do
// live. Frames come at once by default, or at the recorded pace with
// [WithRecordedSpeed]. A replayed body honours Close at any point, and a
// request context that ends makes its Read return ctx.Err().
//
// When recording, the live body is teed as the caller reads it, never read
// ahead, and the interaction is kept when the body ends: at EOF, at a read
// error (replayed as the same error), or at Close. A stream closed half way
// is recorded as far as it was read and replays with an error wrapping
// io.ErrUnexpectedEOF after its last frame; a non-stream body closed early
// (a JSON decoder that had what it needed) is drained so the cassette holds
// all of it.
//
// # Retries
//
// Every HTTP exchange is a line: a 429 and then a 200 are two
// interactions, replayed in order with their headers (Retry-After,
// retry-after-ms, x-should-retry), so an SDK's retry path runs in the test
// as it did live, and the recorder folds the attempts into one record as
// it does live. A transport error (a refused connection) is recorded and
// replayed as a [*RecordedError].
//
// [ForTest] replays the waits of rate limits as 0 ([WithRetryAfter]), so
// a test does not sleep for the Retry-After the provider sent when the
// cassette was recorded: the SDK still reads the header and retries at
// once. A wait the client gave up on when it was recorded (openai-go does
// past 2 minutes) is kept, so it gives up again. New replays the headers
// as recorded unless given WithRetryAfter.
//
// # Faults
//
// [WithFault] changes how one replayed call goes, to test how the
// application copes: cut a stream after N frames (its Read returns
// io.ErrUnexpectedEOF), wait before the response or between frames, answer
// an error status with a body, or fail with a transport error, for the
// interaction at an index or the first request a function picks. A fault
// that makes the call fail does not use the recorded answer up, so the
// application's retry gets it.
//
// # Secrets
//
// Credentials never reach a cassette. The Authorization,
// Proxy-Authorization, api-key, x-api-key, x-goog-api-key, Cookie and
// Set-Cookie headers are dropped; of other request headers only those that
// say what was asked are kept (Content-Type, Accept, OpenAI-Beta,
// Anthropic-Version, Anthropic-Beta, X-Stainless-Retry-Count, and those of
// [WithMatchedHeaders] and [WithRequestHeaders]); user info and key=,
// api_key=, token= and similar query parameters are removed from URLs.
// Before an interaction is kept, and again before the file is written,
// every field is checked for key-shaped strings (what [redact.Secrets]
// would remove) and for the literal values of the credentials the requests
// carried. One found is an error, never a commit: the request is not sent
// (a secret in a request) or the body's last Read and Close fail (a secret
// in a response), and [Cassette.Close] returns a [*SecretError] naming the
// interaction and the field, never the secret. [WithBeforeSave] can scrub
// an interaction first. A miss's message redacts what it shows too.
//
// Personal data is kept out with [WithRedactor] (a [redact.Redactor]):
// emails, phone numbers, card numbers, IBANs, IP addresses and secrets in
// what is kept, a stream's values split across its events included, are
// replaced by their marks ("[EMAIL:3f9a1c]"), and each request is
// redacted the same way before it is matched, so it still finds its line.
//
// # Re-recording
//
// Re-record when what the code sends changes on purpose (a new prompt, a
// new call, another model or parameter) or when the provider's API
// changed: the test fails with a [*MissError] that shows what changed.
// Re-record with the provider's key set, then review the cassette's diff
// as any other test data:
//
//	LLMHISTORY_REPLAY=record OPENAI_API_KEY=sk-... go test ./yourpackage -run TestAgent
//
// or add only what is missing with LLMHISTORY_REPLAY=once. A test that
// fails while recording does not write its cassette.
//
// # Coming from go-vcr
//
// The names follow go-vcr v4 (gopkg.in/dnaeon/go-vcr.v4) where the idea is
// the same: [WithMode], [WithMatcher], [WithPassthrough] and
// [WithReplayableInteractions] as there; [ModeOnce] is go-vcr's
// ModeReplayWithNewEpisodes; [WithBeforeSave] its BeforeSaveHook; at once
// by default and [WithRecordedSpeed] its WithSkipRequestLatency(true) and
// (false). One difference is on purpose: once every recorded answer was
// given, WithReplayableInteractions gives them again in turn where go-vcr
// always gives the first, so a recorded 429-then-200 stays a retry that
// succeeds instead of a 429 forever.
//
// Tested through go-openai, genai, openai-go and the Anthropic SDK:
// recorded against a test server, replayed with the server gone, the SDK
// returns the same values, a stream the same chunks (as separate reads),
// the recorder the same records. Replaying costs tens of microseconds per
// call, a 100-event stream included (go test ./replay -run '^$' -bench
// Call -benchmem).
package replay
