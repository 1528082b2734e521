package imprint

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text from outside is cleaned in one of two strengths, here and nowhere
// else. CleanText is for text read as words (a message a user said, a
// model's memory or scene name): what no reader wants is removed. Captured
// episodes keep their turns as sent, so storableText (PrepareEpisode) changes only what no
// store can hold.

// CleanText returns s without invalid UTF-8, without control characters
// other than newline and tab, without byte order marks, and trimmed.
func CleanText(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == '\ufeff' {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// storableText returns s with invalid UTF-8 replaced by U+FFFD and NUL
// bytes removed. Valid text without NUL is returned as is, without
// copying.
func storableText(s string) string {
	if !strings.Contains(s, "\x00") && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// StorableJSON returns a tool call's input as a store keeps it: a JSON
// document as it is, other text as a JSON string (invalid UTF-8 replaced
// by U+FFFD), blank input as nil.
func StorableJSON(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if json.Valid(raw) {
		return raw
	}
	b, err := json.Marshal(strings.ToValidUTF8(string(raw), "\uFFFD"))
	if err != nil {
		return nil
	}
	return b
}

// storableTurns returns a copy of turns with every text made storableText
// and every tool input StorableJSON.
func storableTurns(turns []Turn) []Turn {
	out := make([]Turn, len(turns))
	for i, t := range turns {
		t.Content = storableText(t.Content)
		t.Meta.Reflection = storableText(t.Meta.Reflection)
		t.Meta.Thinking = storableText(t.Meta.Thinking)
		t.Meta.Name = storableText(t.Meta.Name)
		t.Meta.Error = storableText(t.Meta.Error)
		t.Meta.ErrorCode = storableText(t.Meta.ErrorCode)
		t.Meta.ToolCallID = storableText(t.Meta.ToolCallID)
		t.Meta.Speaker = storableText(t.Meta.Speaker)
		t.Meta.Input = StorableJSON(t.Meta.Input)
		out[i] = t
	}
	return out
}

// OneLine returns s with every run of white space, line breaks included,
// written as one space, and trimmed: a name or label that must stay on its
// line in a prompt or a log.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
