package wire

import "bytes"

// Event is one server-sent event: the lines of a frame up to a blank line.
type Event struct {
	Name string // the "event:" field (the Responses API names its events)
	Data []byte // the "data:" lines, joined by newlines
	// Raw holds the frame's lines that are not SSE fields, joined by
	// newlines. Gemini sends a bare JSON error object this way in the middle
	// of a stream.
	Raw []byte
}

// ScanSSE calls fn for each event in body, in order, until fn returns
// false. Frames may end with "\n\n", "\r\n\r\n" or "\r\r"; comment lines
// (": ...") and "id:"/"retry:" fields are skipped. A last frame cut off
// without its blank line is still delivered: callers decide whether its
// data is whole. The returned slices point into body unless a frame has
// several data lines.
func ScanSSE(body []byte, fn func(Event) bool) {
	var ev Event
	multi := false // ev.Data was built by appending, not sliced
	flush := func() bool {
		if len(ev.Data) == 0 && len(ev.Raw) == 0 && ev.Name == "" {
			return true
		}
		ok := fn(ev)
		ev, multi = Event{}, false
		return ok
	}
	// The next '\n' in body, or -1: found once and kept while lines end
	// before it. A stream whose lines end in '\r' alone may hold no '\n'
	// at all, and looking for one again from each line would cost the
	// square of the body (seconds for 1 MiB).
	nl := bytes.IndexByte(body, '\n')
	for len(body) > 0 {
		var line []byte
		// The next line end: the '\n' found fast (bytes.IndexAny is a
		// byte loop), then a '\r' looked for only before it.
		i, end := nl, nl
		if end < 0 {
			end = len(body)
		}
		if j := bytes.IndexByte(body[:end], '\r'); j >= 0 {
			i = j
		}
		next := len(body) // where the next line starts
		if i < 0 {
			line = body
		} else {
			line = body[:i]
			next = i + 1
			if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
				next = i + 2
			}
		}
		body = body[next:]
		if nl >= 0 {
			if nl -= next; nl < 0 {
				nl = bytes.IndexByte(body, '\n')
			}
		}
		if len(line) == 0 {
			if !flush() {
				return
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment, such as ": OPENROUTER PROCESSING"
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch {
		case found && string(field) == "data":
			switch {
			case ev.Data == nil:
				ev.Data = value
			case !multi:
				ev.Data = append(append(append([]byte(nil), ev.Data...), '\n'), value...)
				multi = true
			default:
				ev.Data = append(append(ev.Data, '\n'), value...)
			}
		case found && string(field) == "event":
			ev.Name = string(value)
		case found && (string(field) == "id" || string(field) == "retry"):
		default:
			if ev.Raw == nil {
				ev.Raw = append([]byte(nil), line...)
			} else {
				ev.Raw = append(append(ev.Raw, '\n'), line...)
			}
		}
	}
	flush()
}

// FrameStart returns where the first whole frame of b begins: just after
// its first blank line, whichever of the three line endings SSE allows
// ("\n\n", "\r\n\r\n", "\r\r") ends it, or -1 when b holds none. A capture
// cut by the recorder keeps the tail of a long stream; the tail starts in
// the middle of an event, and its first whole one is here.
func FrameStart(b []byte) int {
	best := -1
	for _, sep := range [...]string{"\n\n", "\r\n\r\n", "\r\r"} {
		if i := bytes.Index(b, []byte(sep)); i >= 0 && (best < 0 || i+len(sep) < best) {
			best = i + len(sep)
		}
	}
	return best
}
