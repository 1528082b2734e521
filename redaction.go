package imprint

import (
	"bytes"
	"encoding/json"
	"io"
)

// RedactTurns returns a copy of turns with fn applied to every text a turn
// carries: content (a tool turn's output), reflection, thinking, error and
// tool input. A nil fn returns turns as they are.
//
// A tool input that is a JSON document is redacted string by string (keys,
// values, and numbers, which may be card numbers), so an escape such as
// "\n" before a secret cannot hide it; other input is redacted as text and
// kept as a JSON string when the result is no longer JSON.
//
// Every path that stores turns (an episode posted or imported, turns of a
// live session) runs it before the first write, so no secret fn removes
// reaches the store.
func RedactTurns(turns []Turn, fn func(string) string) []Turn {
	if fn == nil {
		return turns
	}
	out := make([]Turn, len(turns))
	for i, t := range turns {
		t.Content = fn(t.Content)
		t.Meta.Reflection = fn(t.Meta.Reflection)
		t.Meta.Thinking = fn(t.Meta.Thinking)
		t.Meta.Error = fn(t.Meta.Error)
		if len(t.Meta.Input) > 0 {
			t.Meta.Input = redactJSON(t.Meta.Input, fn)
		}
		out[i] = t
	}
	return out
}

// redactJSON applies fn to every string and number of the JSON document in
// raw; raw comes back unchanged when fn changes nothing.
func redactJSON(raw json.RawMessage, fn func(string) string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || !atEOF(dec) {
		in := string(raw)
		red := fn(in)
		if red == in {
			return raw
		}
		if json.Valid([]byte(red)) {
			return json.RawMessage(red)
		}
		b, _ := json.Marshal(red)
		return b
	}
	v, changed := redactValue(v, fn)
	if !changed {
		return raw
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// atEOF reports whether dec has nothing left but blanks.
func atEOF(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == io.EOF
}

// redactValue applies fn to the strings and numbers of a decoded JSON
// value and reports whether it changed any.
func redactValue(v any, fn func(string) string) (any, bool) {
	switch x := v.(type) {
	case string:
		r := fn(x)
		return r, r != x
	case json.Number:
		if r := fn(x.String()); r != x.String() {
			return r, true
		}
		return x, false
	case []any:
		changed := false
		for i, e := range x {
			var c bool
			x[i], c = redactValue(e, fn)
			changed = changed || c
		}
		return x, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(x))
		for k, e := range x {
			nk := fn(k)
			ne, c := redactValue(e, fn)
			changed = changed || c || nk != k
			out[nk] = ne
		}
		return out, changed
	}
	return v, false
}
