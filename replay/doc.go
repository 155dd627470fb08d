// Package replay records an application's calls to an LLM provider into a
// cassette once, and replays them in tests: offline, fast, the same every
// run, streams and retries included.
//
// A [Cassette] is an [http.RoundTripper]. Give it to the SDK's HTTP client,
// with the recorder outside it so that a replayed call is recorded like a
// live one and a test can assert on the history too:
//
//	cassette := replay.ForTest(t, "testdata/agent.jsonl") // closed when the test ends
//	rec := middleware.NewRecorder()
//	client := middleware.NewClient(nil, rec.Middleware(), cassette.Middleware())
//	cfg := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY")) // go-openai; genai, openai-go, Anthropic alike
//	cfg.HTTPClient = client
//
// [New] opens a cassette outside tests; [Cassette.Close] writes a recording.
//
// # Modes
//
//   - [ModeReplay] answers every request from the cassette and never touches
//     the network. A request with no recorded answer fails with a
//     [*MissError]. This is the default: a test without a key, in CI,
//     never calls a provider, and a missing cassette is an error from New
//     ([ErrNoCassette]) that says how to record it.
//   - [ModeRecord] calls the provider for every request and replaces the
//     cassette at Close.
//   - [ModeOnce] replays what the cassette holds and records what it does not.
//   - [ModePassthrough] calls the provider and leaves the cassette alone.
//
// The mode is [WithMode]'s, else the LLMHISTORY_REPLAY environment
// variable's ([EnvMode]: replay, record, once or passthrough), else replay.
//
// # The cassette
//
// A cassette is a JSON Lines file a person can read and diff: one
// interaction per line, each line carrying the format version (a line of a
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
// (shown on several lines here). A JSON body (an object or an array) is
// stored as JSON, not as an escaped string, and laid out again on load
// exactly as it was sent (body_indent, body_spaced, body_tail); other text
// is stored as body_text, and bytes that are not UTF-8 as body_base64. A
// stream is stored as frames, each with its offset from the start of the
// response:
//
//	"frames":[{"at_ms":211.5,"data":{"id":"chatcmpl-2","object":"chat.completion.chunk",...}},
//	          {"at_ms":236.1,"event":"content_block_delta","data":{...}},
//	          {"at_ms":980.2,"text":"data: [DONE]\n\n"}]
//
// A server-sent event of one compact JSON data line is stored as its event
// name and its data as JSON; any other frame as text or base64. Each
// response carries the sha256 of its body (of a stream: of each frame's
// length and bytes), so a line edited by hand, or mangled by a merge, fails
// to load with a [*LineError] naming the line; so do a truncated line and
// malformed JSON. [Read] and [Write] load and write cassettes on their own.
// Writes replace the file atomically (a temporary file renamed over it): a
// crash leaves the old cassette or the new one, never a part of one.
//
// # Matching
//
// A request is answered by a recorded one with the same method, URL path
// and query (secret parameters left out; the host is not compared, so a
// cassette recorded against one base URL replays against any) and the same
// body, compared as JSON when both are JSON: key order and spacing do not
// matter, and numbers are compared as numbers (1, 1.0 and 1e0 are equal).
// Headers are not compared unless named with [WithMatchedHeaders]. Fields
// that change every run are left out with [WithIgnoredFields]
// (gjson-style paths: "user", "seed", "metadata.request_id",
// "messages.#.name"), query parameters with [WithIgnoredQuery], and
// [WithMatcher] replaces the comparison altogether, given the default one
// to build on.
//
// Identical requests are answered in the order they were recorded: the
// Nth identical request gets the Nth recorded answer. One more is a
// [*MissError], because the code now makes a call it did not make when the
// cassette was recorded (an agent looping once more, a retry that did not
// happen); [WithRepeatLast] repeats the last answer instead, for polling.
//
// A miss says why. The [*MissError] names the closest recorded request
// (the same method and path first, then the fewest differences) and lists
// the differences, each JSON leaf by its path, recorded against got:
//
//	replay: no recorded answer for POST /v1/chat/completions (cassette testdata/agent.jsonl, mode replay)
//	  closest: interaction 1 (line 2), POST /v1/chat/completions, 2 difference(s):
//	    body.messages.1.content: recorded "What's the weather in Paris?", got "What's the weather in Rome?"
//	    body.temperature: recorded 0.2, got (absent)
//	  if the change is intended, re-record: LLMHISTORY_REPLAY=record (every call) or LLMHISTORY_REPLAY=once (what is missing)
//
// It is the RoundTrip's error, so the SDK returns it: errors.As(err,
// &miss) works through go-openai, openai-go, genai and the Anthropic SDK.
// (SDKs that retry transport errors, openai-go and Anthropic's, retry a
// miss before giving up; option.WithMaxRetries(0) makes it immediate.)
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
// all of it. A server-sent event stream is cut into its events whatever
// the network's read boundaries were; another streamed body into the reads
// it arrived in.
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
// every field is checked for key-shaped strings (what [middleware.Redact]
// would remove) and for the literal values of the credentials the requests
// carried. One found is an error, never a commit: the request is not sent
// (a secret in a request) or the body's last Read and Close fail (a secret
// in a response), and [Cassette.Close] returns a [*SecretError] naming the
// interaction and the field, never the secret. [WithBeforeSave] can scrub
// an interaction first.
//
// # Re-recording
//
// Re-record when what the code sends changes on purpose (a new prompt, a
// new call, another model or parameter) or when the provider's API
// changed: the test fails with a [*MissError] that shows what changed.
// Re-record every cassette of a package with the provider's key set:
//
//	LLMHISTORY_REPLAY=record OPENAI_API_KEY=sk-... go test ./yourpackage -run TestAgent
//
// or add only what is missing with LLMHISTORY_REPLAY=once. Review the diff
// of the cassette before committing it, as any other test data.
package replay
