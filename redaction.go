package imprint

import "encoding/json"

// RedactTurns returns a copy of turns with fn applied to every text a turn
// carries: content (a tool turn's output), reflection, thinking, error and
// tool input. A tool input that is no longer a JSON document after fn is
// kept as a JSON string. A nil fn returns turns as they are.
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
			in := string(t.Meta.Input)
			if red := fn(in); red != in {
				if json.Valid([]byte(red)) {
					t.Meta.Input = json.RawMessage(red)
				} else {
					b, _ := json.Marshal(red)
					t.Meta.Input = b
				}
			}
		}
		out[i] = t
	}
	return out
}
