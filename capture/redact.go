package capture

import (
	"encoding/json"

	imprint "github.com/imprint-dev/imprint"
)

// redactEpisode returns ep with fn applied to every text a turn carries:
// content, adapter reflection, thinking, tool input, error. The episode's
// turns are copied; ep itself is not changed. A tool input that is no longer
// valid JSON after redaction is kept as a JSON string.
func redactEpisode(ep imprint.Episode, fn func(string) string) imprint.Episode {
	if fn == nil {
		return ep
	}
	turns := make([]imprint.Turn, len(ep.Turns))
	for i, t := range ep.Turns {
		t.Content = fn(t.Content)
		t.Meta.Reflection = fn(t.Meta.Reflection)
		t.Meta.Thinking = fn(t.Meta.Thinking)
		t.Meta.Error = fn(t.Meta.Error)
		if len(t.Meta.Input) > 0 {
			in := string(t.Meta.Input)
			if out := fn(in); out != in {
				if json.Valid([]byte(out)) {
					t.Meta.Input = json.RawMessage(out)
				} else {
					b, _ := json.Marshal(out)
					t.Meta.Input = b
				}
			}
		}
		turns[i] = t
	}
	ep.Turns = turns
	return ep
}
