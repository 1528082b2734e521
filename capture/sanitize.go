package capture

import (
	"strings"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
)

// sanitizeEpisode returns ep with every turn made safe to encode and store:
// texts have invalid UTF-8 replaced by U+FFFD and NUL bytes removed, and a
// tool input that is not a JSON document becomes a JSON string. The
// episode's turns are copied; ep itself is not changed.
func sanitizeEpisode(ep imprint.Episode) imprint.Episode {
	turns := make([]imprint.Turn, len(ep.Turns))
	for i, t := range ep.Turns {
		t.Content = cleanText(t.Content)
		t.Meta.Reflection = cleanText(t.Meta.Reflection)
		t.Meta.Thinking = cleanText(t.Meta.Thinking)
		t.Meta.Name = cleanText(t.Meta.Name)
		t.Meta.Error = cleanText(t.Meta.Error)
		t.Meta.ErrorCode = cleanText(t.Meta.ErrorCode)
		t.Meta.ToolCallID = cleanText(t.Meta.ToolCallID)
		t.Meta.Speaker = cleanText(t.Meta.Speaker)
		t.Meta.Input = toolInput(t.Meta.Input)
		turns[i] = t
	}
	ep.Turns = turns
	return ep
}

// cleanText replaces invalid UTF-8 in s by U+FFFD and removes NUL bytes.
// Valid text without NUL is returned as is, without copying.
func cleanText(s string) string {
	if !strings.Contains(s, "\x00") && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}
