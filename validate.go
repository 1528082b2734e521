package imprint

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxIDBytes is the longest id (of a session, episode, message, turn,
// trace, memory, or a scope part) imprint accepts from outside.
const MaxIDBytes = 256

// ValidateID returns an error of kind ErrInvalid naming what when id is
// blank, longer than MaxIDBytes, not valid UTF-8, or holds a control
// character (NUL, tab, newline and the other Unicode Cc characters): such
// ids break keys, logs and terminals, and no source of ours produces them.
// Callers of optional ids check only the ids given.
func ValidateID(what, id string) error {
	if len(id) > MaxIDBytes {
		return Invalidf("%s is longer than %d bytes (%d)", what, MaxIDBytes, len(id))
	}
	blank := true
	for i, r := range id {
		switch {
		case r == utf8.RuneError && !validRuneAt(id, i):
			return Invalidf("%s is not valid UTF-8 (byte %d)", what, i)
		case unicode.IsControl(r):
			return Invalidf("%s must not contain control characters (%s at byte %d)", what, runeName(r), i)
		case !unicode.IsSpace(r):
			blank = false
		}
	}
	if blank {
		return Invalidf("%s is required", what)
	}
	return nil
}

// ValidateText returns an error of kind ErrInvalid naming what when s is not
// valid UTF-8, giving the byte offset of the first bad byte. Text that is
// not UTF-8 would otherwise be replaced by U+FFFD somewhere downstream,
// silently changing what was said.
func ValidateText(what, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	for i, r := range s {
		if r == utf8.RuneError && !validRuneAt(s, i) {
			return Invalidf("%s is not valid UTF-8 (byte %d)", what, i)
		}
	}
	return nil
}

// validRuneAt reports whether s holds a real U+FFFD at byte i, as opposed to
// a byte that does not start a valid encoding.
func validRuneAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 3
}

// runeName writes a control character for an error message.
func runeName(r rune) string {
	if r == 0 {
		return "NUL"
	}
	return fmt.Sprintf("U+%04X", r)
}
