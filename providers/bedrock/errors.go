package bedrock

import (
	"bytes"
	"strings"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// classify reads a Bedrock error: its type from the X-Amzn-ErrorType
// header ("ThrottlingException:http://internal.amazon.com/coral/...") or,
// when the header is not given, the body's "__type" or "code"
// ("com.amazon.coral.service#ThrottlingException"), and its message from
// the body's "message" or "Message". A type it does not know leaves what
// the HTTP status says.
func classify(status int, headerType string, body []byte) (errorType, message string) {
	errorType, message = providers.ClassifyError(status, body)
	typ := headerType
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '{' {
		root := wire.Parse(b)
		if typ == "" {
			typ = root.Get("__type").String()
		}
		if typ == "" {
			typ = root.Get("code").String()
		}
		if message == "" {
			message = root.Get("Message").String()
		}
	}
	if t := exceptionType(typ, message); t != "" {
		errorType = t
	}
	return errorType, strings.Clone(message)
}

// exceptionType maps a Bedrock exception's name onto the taxonomy of
// package record, or returns "" for a name it does not know. The name may
// come with a namespace before '#' or a URL after ':', and in either case:
// the headers of a stream's exception say "throttlingException".
func exceptionType(name, message string) string {
	if i := strings.LastIndexByte(name, '#'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "":
		return ""
	case "throttlingexception", "throttling", "toomanyrequestsexception":
		return record.ErrorRateLimit
	case "servicequotaexceededexception":
		// Not retried by the SDKs: the account's quota must change first.
		return record.ErrorQuota
	case "serviceunavailableexception", "modelnotreadyexception":
		return record.ErrorOverloaded
	case "modeltimeoutexception":
		return record.ErrorTimeout
	case "validationexception":
		if contextLength(message) {
			return record.ErrorContextLength
		}
		return record.ErrorInvalidRequest
	case "accessdeniedexception":
		return record.ErrorPermission
	case "resourcenotfoundexception":
		return record.ErrorNotFound
	case "modelerrorexception", "internalserverexception", "modelstreamerrorexception", "internalfailure":
		return record.ErrorServer
	case "conflictexception":
		return record.ErrorConflict
	case "unrecognizedclientexception", "invalidsignatureexception", "incompletesignatureexception",
		"missingauthenticationtokenexception", "expiredtokenexception", "invalidclienttokenid",
		"signaturedoesnotmatch", "missingauthenticationtoken":
		return record.ErrorAuth
	}
	return ""
}

// contextLength reports whether a ValidationException says the prompt
// does not fit the model: Bedrock's own "Input is too long for requested
// model.", and the words of the model behind it ("prompt is too long:
// 201234 tokens > 200000 maximum", "input length and `max_tokens` exceed
// context limit", "This model's maximum context length is ...").
func contextLength(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range [...]string{"input is too long", "prompt is too long", "exceed context limit", "maximum context length", "too many input tokens", "exceeds the maximum number of tokens", "context window"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
