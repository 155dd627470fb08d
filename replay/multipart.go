package replay

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// A multipart body (a file upload: go-openai's CreateTranscription, an
// image edit) is delimited by a boundary the client draws at random for
// every request, so its bytes never match a recording. Matching reads it
// into its parts instead, and compares them as it compares JSON:
//
//	{"parts": [{"header": {"Content-Disposition": "form-data; name=\"file\"; filename=\"hello.wav\"",
//	                       "Content-Type": "application/octet-stream"},
//	            "content": "RIFF…"},
//	           {"header": {"Content-Disposition": "form-data; name=\"model\""}, "content": "whisper-1"}]}
//
// Every part header is compared (so the field names, file names and
// content types are), and every part's content, byte for byte; the
// boundary, and the preamble and epilogue around the parts, are not. A
// difference names the part by its index: "body.parts.1.content".

// decodeMultipart reads body, sent with the Content-Type contentType, into
// the parts matching compares, when contentType is multipart with a
// boundary and body is a well-formed multipart body of it. Anything else
// is compared as bytes.
func decodeMultipart(contentType string, body []byte) (any, bool) {
	boundary, ok := multipartBoundary(contentType)
	if !ok {
		return nil, false
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	parts := []any{}
	for {
		// NextRawPart, not NextPart: a quoted-printable part is compared as
		// sent, with its Content-Transfer-Encoding header.
		p, err := r.NextRawPart()
		if err == io.EOF {
			return map[string]any{"parts": parts}, true
		}
		if err != nil {
			return nil, false
		}
		content, err := io.ReadAll(p)
		if err != nil {
			return nil, false
		}
		header := make(map[string]any, len(p.Header))
		for k, vs := range p.Header {
			list := make([]any, len(vs))
			for i, v := range vs {
				list[i] = canonicalParams(v)
			}
			if len(list) == 1 {
				header[k] = list[0]
			} else {
				header[k] = list
			}
		}
		parts = append(parts, map[string]any{"header": header, "content": string(content)})
	}
}

// multipartBoundary returns the boundary of a multipart Content-Type.
func multipartBoundary(contentType string) (string, bool) {
	const prefix = "multipart/"
	if len(contentType) < len(prefix) || !strings.EqualFold(contentType[:len(prefix)], prefix) {
		return "", false // most bodies: JSON, no need to parse
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

// canonicalParams writes a header value of the form "type; name=value"
// (Content-Disposition, Content-Type) one way: parameters sorted, quoted
// only where needed. Clients differ in how they write the same value.
// Other values are kept as they are.
func canonicalParams(v string) string {
	mt, params, err := mime.ParseMediaType(v)
	if err != nil {
		return v
	}
	if s := mime.FormatMediaType(mt, params); s != "" {
		return s
	}
	return v
}

// withoutBoundary is the Content-Type header values v, a multipart type's
// boundary left out, for WithMatchedHeaders("Content-Type").
func withoutBoundary(v []string) []string {
	var out []string
	for _, s := range v {
		mt, params, err := mime.ParseMediaType(s)
		if err == nil && strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" {
			delete(params, "boundary")
			if f := mime.FormatMediaType(mt, params); f != "" {
				s = f
			}
		}
		out = append(out, s)
	}
	return out
}

// isContentType says k names the Content-Type header.
func isContentType(k string) bool { return http.CanonicalHeaderKey(k) == "Content-Type" }
