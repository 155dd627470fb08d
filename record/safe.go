package record

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// SafeOptions bounds what [SafeOptions.Convert] keeps of a value. A zero
// field means its default, so SafeOptions{} is the default policy used by
// [Safe] and [SafeJSON].
type SafeOptions struct {
	MaxDepth  int // nesting levels of maps, slices and structs kept; default 32
	MaxString int // bytes kept of one string or []byte; default 32 KiB
	MaxItems  int // elements kept of one slice, array or map; default 1000
	MaxNodes  int // values visited in all, so shared substructure cannot explode; default 20000
	MaxJSON   int // bytes accepted from one MarshalJSON; default 1 MiB
}

func (o SafeOptions) withDefaults() SafeOptions {
	if o.MaxDepth <= 0 {
		o.MaxDepth = 32
	}
	if o.MaxString <= 0 {
		o.MaxString = 32 << 10
	}
	if o.MaxItems <= 0 {
		o.MaxItems = 1000
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = 20000
	}
	if o.MaxJSON <= 0 {
		o.MaxJSON = 1 << 20
	}
	return o
}

// Safe returns a JSON-safe copy of v under the default [SafeOptions].
func Safe(v any) any {
	out, _ := SafeOptions{}.Convert(v)
	return out
}

// SafeJSON returns the JSON encoding of [Safe](v). It never fails.
func SafeJSON(v any) json.RawMessage { return SafeOptions{}.JSON(v) }

// ArgsJSON returns positional arguments as a JSON-safe array, "[]" when
// there are none: the form of [Record.Args].
func ArgsJSON(args ...any) json.RawMessage {
	if args == nil {
		args = []any{}
	}
	return SafeJSON(args)
}

// KwargsJSON returns named arguments as a JSON-safe object, "{}" when there
// are none: the form of [Record.Kwargs].
func KwargsJSON(kwargs map[string]any) json.RawMessage {
	if kwargs == nil {
		return json.RawMessage("{}")
	}
	return SafeJSON(kwargs)
}

// JSON returns the JSON encoding of the safe form of v. It never fails.
func (o SafeOptions) JSON(v any) json.RawMessage {
	out, _ := o.Convert(v)
	return appendSafe(nil, out)
}

// Convert returns a JSON-safe copy of v, built only of nil, bool, string,
// int64, uint64, float32, float64, [json.Number], []any and map[string]any,
// so that encoding it cannot fail. cut reports whether a limit removed
// anything. Convert never panics:
//
//   - map keys become strings (text marshalers and numbers as encoding/json
//     does, anything else as printed by fmt);
//   - NaN and ±Inf become the strings "NaN", "Infinity" and "-Infinity";
//   - invalid UTF-8 becomes U+FFFD; []byte becomes base64, as encoding/json;
//   - time.Time becomes RFC 3339, time.Duration its String, an error its
//     Error, a json.Marshaler or encoding.TextMarshaler what it produces;
//   - structs follow their json tags (name, "-", omitempty, omitzero);
//   - a func, a channel, a cycle, a value past MaxDepth, or a method that
//     panics or fails becomes an inspect-style string such as
//     "<func(int) error>" or "<cycle: *main.Node>", at that place only;
//   - strings, collections and the total number of values are capped, and a
//     cut leaves a marker ("…[truncated 12 bytes]", "…[3 more items]").
func (o SafeOptions) Convert(v any) (safe any, cut bool) {
	s := safer{o: o.withDefaults()}
	defer func() {
		if r := recover(); r != nil {
			safe, cut = panicInspect("converting", reflect.TypeOf(v), r), true
		}
	}()
	safe = s.value(v, 0)
	return safe, s.cut
}

// Inspect returns a short description of v's kind, the string Convert
// substitutes for a value it cannot make safe: "<func()>", "<chan int>".
func Inspect(v any) string {
	if v == nil {
		return "<nil>"
	}
	return "<" + reflect.TypeOf(v).String() + ">"
}

type safer struct {
	o     SafeOptions
	nodes int
	path  []uintptr // maps, slices and pointers on the way down, to spot cycles
	cut   bool
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	durationType      = reflect.TypeFor[time.Duration]()
	numberType        = reflect.TypeFor[json.Number]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	errorType         = reflect.TypeFor[error]()
)

// value handles the common concrete types without reflection.
func (s *safer) value(v any, depth int) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		s.nodes++
		return s.str(x)
	case bool:
		s.nodes++
		return x
	case int:
		s.nodes++
		return int64(x)
	case int64:
		s.nodes++
		return x
	case float64:
		s.nodes++
		return safeFloat(x)
	}
	return s.reflect(reflect.ValueOf(v), depth)
}

func (s *safer) reflect(rv reflect.Value, depth int) any {
	if !rv.IsValid() {
		return nil
	}
	s.nodes++
	if s.nodes > s.o.MaxNodes {
		s.cut = true
		return "…[truncated: too many values]"
	}
	t := rv.Type()
	k := rv.Kind()
	if (k == reflect.Pointer || k == reflect.Interface) && rv.IsNil() {
		return nil
	}
	if rv.CanInterface() {
		switch {
		case t == timeType:
			return rv.Interface().(time.Time).UTC().Format(time.RFC3339Nano)
		case t == durationType:
			return time.Duration(rv.Int()).String()
		case t == numberType:
			n := json.Number(rv.String())
			if _, err := strconv.ParseFloat(string(n), 64); err == nil && json.Valid([]byte(n)) {
				return n
			}
			return s.str(string(n))
		case t.Implements(jsonMarshalerType):
			return s.marshaler(rv, depth)
		case t.Implements(errorType):
			return s.method(rv, "Error", func() string { return rv.Interface().(error).Error() })
		case t.Implements(textMarshalerType):
			return s.method(rv, "MarshalText", func() string {
				b, err := rv.Interface().(encoding.TextMarshaler).MarshalText()
				if err != nil {
					panic(err)
				}
				return string(b)
			})
		}
	}
	switch k {
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint()
	case reflect.Float32:
		f := rv.Float()
		if !isFinite(f) {
			return safeFloat(f)
		}
		return float32(f)
	case reflect.Float64:
		return safeFloat(rv.Float())
	case reflect.Complex64, reflect.Complex128:
		bits := 128
		if k == reflect.Complex64 {
			bits = 64
		}
		return strconv.FormatComplex(rv.Complex(), 'g', -1, bits)
	case reflect.String:
		return s.str(rv.String())
	case reflect.Interface:
		return s.reflect(rv.Elem(), depth)
	case reflect.Pointer:
		if !s.enter(rv.Pointer()) {
			return "<cycle: " + t.String() + ">"
		}
		defer s.leave()
		return s.reflect(rv.Elem(), depth)
	case reflect.Map:
		return s.mapValue(rv, depth)
	case reflect.Slice:
		if rv.IsNil() {
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return s.bytes(rv.Bytes())
		}
		if rv.Len() > 0 {
			if !s.enter(rv.Pointer()) {
				return "<cycle: " + t.String() + ">"
			}
			defer s.leave()
		}
		return s.list(rv, depth)
	case reflect.Array:
		return s.list(rv, depth)
	case reflect.Struct:
		return s.structValue(rv, depth)
	}
	// Func, Chan, UnsafePointer: nothing JSON can hold.
	return "<" + t.String() + ">"
}

func (s *safer) enter(p uintptr) bool {
	if slices.Contains(s.path, p) {
		return false
	}
	s.path = append(s.path, p)
	return true
}

func (s *safer) leave() { s.path = s.path[:len(s.path)-1] }

func (s *safer) tooDeep(depth int) bool {
	if depth < s.o.MaxDepth {
		return false
	}
	s.cut = true
	return true
}

func (s *safer) list(rv reflect.Value, depth int) any {
	if s.tooDeep(depth) {
		return "<max depth: " + rv.Type().String() + ">"
	}
	n := rv.Len()
	keep := min(n, s.o.MaxItems)
	out := make([]any, 0, keep+1)
	for i := range keep {
		out = append(out, s.reflect(rv.Index(i), depth+1))
	}
	if n > keep {
		s.cut = true
		out = append(out, "…["+strconv.Itoa(n-keep)+" more items]")
	}
	return out
}

func (s *safer) mapValue(rv reflect.Value, depth int) any {
	if rv.IsNil() {
		return nil
	}
	t := rv.Type()
	if !s.enter(rv.Pointer()) {
		return "<cycle: " + t.String() + ">"
	}
	defer s.leave()
	if s.tooDeep(depth) {
		return "<max depth: " + t.String() + ">"
	}
	type entry struct {
		key, typ string
		val      reflect.Value
	}
	entries := make([]entry, 0, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		k := it.Key()
		if k.Kind() == reflect.Interface && !k.IsNil() {
			k = k.Elem()
		}
		entries = append(entries, entry{s.key(k), k.Type().String(), it.Value()})
	}
	// Sort by key, then by the key's type, so that keys printing alike
	// (1 and "1") get their suffixes in the same order every time.
	slices.SortFunc(entries, func(a, b entry) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.typ, b.typ)
	})
	keep := min(len(entries), s.o.MaxItems)
	out := make(map[string]any, keep+1)
	for _, e := range entries[:keep] {
		k := e.key
		// Distinct keys can print alike (1 and "1"); keep both.
		for i := 2; ; i++ {
			if _, taken := out[k]; !taken {
				break
			}
			k = e.key + " (" + strconv.Itoa(i) + ")"
		}
		out[k] = s.reflect(e.val, depth+1)
	}
	if len(entries) > keep {
		s.cut = true
		out["…"] = "[" + strconv.Itoa(len(entries)-keep) + " more keys]"
	}
	return out
}

// key turns a map key into a string the way encoding/json does where it
// can, and by printing it otherwise.
func (s *safer) key(k reflect.Value) string {
	if k.Kind() == reflect.Interface {
		if k.IsNil() {
			return "<nil>"
		}
		k = k.Elem()
	}
	switch k.Kind() {
	case reflect.String:
		return strings.ToValidUTF8(k.String(), "\uFFFD")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(k.Float(), 'g', -1, 64)
	case reflect.Bool:
		return strconv.FormatBool(k.Bool())
	}
	if k.CanInterface() && k.Type().Implements(textMarshalerType) && !(k.Kind() == reflect.Pointer && k.IsNil()) {
		if str, ok := s.method(k, "MarshalText", func() string {
			b, err := k.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				panic(err)
			}
			return string(b)
		}).(string); ok {
			return str
		}
	}
	var str string
	func() {
		defer func() {
			if r := recover(); r != nil {
				str = "<" + k.Type().String() + ">"
			}
		}()
		str = fmt.Sprint(k.Interface())
	}()
	return s.str(str).(string)
}

func (s *safer) structValue(rv reflect.Value, depth int) any {
	t := rv.Type()
	if s.tooDeep(depth) {
		return "<max depth: " + t.String() + ">"
	}
	out := make(map[string]any, t.NumField())
	s.fields(rv, depth, out)
	return out
}

// fields adds rv's exported fields to out, promoting the fields of
// untagged embedded structs; fields already present (from an outer struct)
// win, as in encoding/json.
func (s *safer) fields(rv reflect.Value, depth int, out map[string]any) {
	t := rv.Type()
	var embedded []reflect.Value
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		fv := rv.Field(i)
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, fv)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if hasOption(opts, "omitempty") && isEmptyValue(fv) || hasOption(opts, "omitzero") && fv.IsZero() {
			continue
		}
		out[name] = s.reflect(fv, depth+1)
	}
	for _, ev := range embedded {
		inner := make(map[string]any)
		s.fields(ev, depth, inner)
		for k, v := range inner {
			if _, taken := out[k]; !taken {
				out[k] = v
			}
		}
	}
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// marshaler asks a json.Marshaler for its JSON and makes that safe too.
func (s *safer) marshaler(rv reflect.Value, depth int) any {
	var raw []byte
	res := s.method(rv, "MarshalJSON", func() string {
		b, err := rv.Interface().(json.Marshaler).MarshalJSON()
		if err != nil {
			panic(err)
		}
		raw = b
		return ""
	})
	if raw == nil {
		return res // the inspect string of the failure
	}
	return s.rawJSON(raw, rv.Type(), depth)
}

func (s *safer) rawJSON(raw []byte, t reflect.Type, depth int) any {
	if len(raw) > s.o.MaxJSON {
		s.cut = true
		return "<" + t.String() + ": JSON of " + strconv.Itoa(len(raw)) + " bytes, over the limit>"
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return "<" + t.String() + ": invalid JSON from MarshalJSON>"
	}
	return s.value(v, depth)
}

// method calls fn, which runs one of the value's own methods, and turns a
// panic or an error (raised by fn as a panic) into an inspect string.
func (s *safer) method(rv reflect.Value, name string, fn func() string) (out any) {
	defer func() {
		if r := recover(); r != nil {
			out = panicInspect(name+" of", rv.Type(), r)
		}
	}()
	return s.str(fn())
}

func panicInspect(what string, t reflect.Type, r any) string {
	typ := "nil"
	if t != nil {
		typ = t.String()
	}
	msg := "panic"
	switch x := r.(type) {
	case string:
		msg = x
	case error:
		// The error may be the one that just panicked; do not trust it.
		func() {
			defer func() { _ = recover() }()
			msg = x.Error()
		}()
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return "<" + what + " " + typ + " failed: " + strings.ToValidUTF8(msg, "\uFFFD") + ">"
}

func (s *safer) str(x string) any {
	if !utf8.ValidString(x) {
		x = strings.ToValidUTF8(x, "\uFFFD")
	}
	if len(x) <= s.o.MaxString {
		return x
	}
	s.cut = true
	cut := s.o.MaxString
	for cut > 0 && !utf8.RuneStart(x[cut]) {
		cut--
	}
	return x[:cut] + "…[truncated " + strconv.Itoa(len(x)-cut) + " bytes]"
}

func (s *safer) bytes(b []byte) any {
	// base64 grows by 4/3; cap the encoded string, not the input.
	limit := s.o.MaxString / 4 * 3
	if len(b) <= limit {
		return base64.StdEncoding.EncodeToString(b)
	}
	s.cut = true
	return base64.StdEncoding.EncodeToString(b[:limit]) + "…[truncated " + strconv.Itoa(len(b)-limit) + " bytes]"
}

func safeFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// appendSafe encodes a value built by Convert (or decoded by encoding/json
// with UseNumber). Keys are sorted so the output is deterministic.
func appendSafe(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case string:
		return appendString(dst, x)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case uint64:
		return strconv.AppendUint(dst, x, 10)
	case float64:
		if !isFinite(x) {
			return appendString(dst, safeFloat(x).(string))
		}
		return appendFloat(dst, x, 64)
	case float32:
		if !isFinite(float64(x)) {
			return appendString(dst, safeFloat(float64(x)).(string))
		}
		return appendFloat(dst, float64(x), 32)
	case json.Number:
		if x == "" || !json.Valid([]byte(x)) {
			return appendString(dst, string(x))
		}
		return append(dst, x...)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendSafe(dst, e)
		}
		return append(dst, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendSafe(dst, x[k])
		}
		return append(dst, '}')
	}
	// Not a safe value: convert it first. Convert only builds the types
	// above, so this recurses once.
	out, _ := SafeOptions{}.Convert(v)
	switch out.(type) {
	case nil, bool, string, int64, uint64, float64, float32, json.Number, []any, map[string]any:
		return appendSafe(dst, out)
	}
	return appendString(dst, Inspect(v))
}
