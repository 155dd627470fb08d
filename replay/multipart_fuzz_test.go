package replay

import (
	"bytes"
	"mime/multipart"
	"net/textproto"
	"reflect"
	"sort"
	"testing"
)

// FuzzDecodeMultipart reads arbitrary bodies as multipart: it never
// panics, and what it reads does not depend on the boundary: the parts
// written again under another boundary read the same.
func FuzzDecodeMultipart(f *testing.F) {
	f.Add("multipart/form-data; boundary=xyz", []byte("--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: application/octet-stream\r\n\r\nRIFF\x00\xff\r\n--xyz\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--xyz--\r\n"))
	f.Add("multipart/form-data; boundary=\"a b\"", []byte("preamble\r\n--a b\r\nContent-Disposition: form-data; name=x\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=41\r\r\n--a b--\r\nepilogue"))
	f.Add("multipart/mixed; boundary=q", []byte("--q\r\nX: 1\r\nX: 2\r\n\r\n\r\n--q\r\n\r\n--q\r\n\r\n\r\n--q--"))
	f.Add("multipart/form-data; boundary=q", []byte("--q\r\n\r\nno end"))
	f.Add("multipart/form-data; boundary=q", []byte("--q--"))
	f.Add("multipart/form-data", []byte("--q\r\n\r\nx\r\n--q--"))
	f.Add("application/json", []byte(`{"a":1}`))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		v, ok := decodeMultipart(contentType, body)
		if !ok {
			return
		}
		parts := v.(map[string]any)["parts"].([]any)
		var again bytes.Buffer
		w := multipart.NewWriter(&again)
		for _, p := range parts {
			p := p.(map[string]any)
			h := textproto.MIMEHeader{}
			keys := make([]string, 0)
			for k := range p["header"].(map[string]any) {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				switch hv := p["header"].(map[string]any)[k].(type) {
				case string:
					h.Add(k, hv)
				case []any:
					for _, s := range hv {
						h.Add(k, s.(string))
					}
				}
			}
			pw, err := w.CreatePart(h)
			if err != nil {
				t.Fatal(err)
			}
			pw.Write([]byte(p["content"].(string)))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(body, []byte(w.Boundary())) {
			return // the new boundary occurs in the content: not a valid rewrite
		}
		v2, ok := decodeMultipart(w.FormDataContentType(), again.Bytes())
		if !ok {
			t.Fatalf("the parts written again do not read:\n%q", again.Bytes())
		}
		if !reflect.DeepEqual(v, v2) {
			t.Fatalf("another boundary, other parts:\n%#v\n%#v\n%q", v, v2, again.Bytes())
		}
	})
}
