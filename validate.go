package imprint

import (
	"fmt"
	"strings"
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

// ValidateJSON returns an error of kind ErrInvalid naming what and the byte
// offset when data is not valid UTF-8 or a string in it escapes half of a
// UTF-16 surrogate pair (a \ud800 not followed by its \udc00-\udfff, or
// the second half alone): encoding/json turns both into U+FFFD without a
// word, so the text stored would not be the text sent. It does not check
// that data is JSON; escapes are looked for inside strings only.
func ValidateJSON(what string, data []byte) error {
	if off, problem := BadJSONText(data); off >= 0 {
		return Invalidf("%s %s (byte %d)", what, problem, off)
	}
	return nil
}

// BadJSONText is ValidateJSON's check: it returns the byte offset of the
// first problem in data and what it is ("is not valid UTF-8", "has a lone
// UTF-16 surrogate escape \ud800"), or -1 and "" when there is none.
func BadJSONText(data []byte) (offset int, problem string) {
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return i, "is not valid UTF-8"
			}
			i += size
		}
	}
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in && i+1 < len(data):
			if data[i+1] != 'u' {
				i++ // an escaped quote or backslash does not end or start anything
				continue
			}
			r, ok := hex4(data, i+2)
			switch {
			case !ok:
				i++ // not an escape JSON allows: the caller's JSON check reports it
				continue
			case r < 0xd800 || r > 0xdfff:
			case r >= 0xdc00:
				return i, fmt.Sprintf("has a lone UTF-16 surrogate escape \\u%04x", r)
			default:
				next, ok := rune(0), i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u'
				if ok {
					next, ok = hex4(data, i+8)
				}
				if !ok || next < 0xdc00 || next > 0xdfff {
					return i, fmt.Sprintf("has a lone UTF-16 surrogate escape \\u%04x", r)
				}
				i += 6 // the pair's second half is checked here
			}
			i += 5
		}
	}
	return -1, ""
}

// hex4 reads four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// CheckTurn returns an error of kind ErrInvalid naming
// <prefix>turns[i].id or .ts when the turn's id, if given, is unusable
// (ValidateID) or its time lies outside years MinTimeYear to MaxTimeYear:
// what the library paths (capture, live sessions) check of turns that did
// not come through JSON.
func CheckTurn(prefix string, i int, t Turn) error {
	if strings.TrimSpace(t.ID) != "" {
		if err := ValidateID(fmt.Sprintf("%sturns[%d].id", prefix, i), t.ID); err != nil {
			return err
		}
	}
	return CheckTime(fmt.Sprintf("%sturns[%d].ts", prefix, i), t.TS.Time)
}

// CheckMessage is CheckTurn for messages[i] (its id and timestamp).
func CheckMessage(i int, m Message) error {
	if strings.TrimSpace(m.ID) != "" {
		if err := ValidateID(fmt.Sprintf("messages[%d].id", i), m.ID); err != nil {
			return err
		}
	}
	return CheckTime(fmt.Sprintf("messages[%d].timestamp", i), m.Timestamp.Time)
}

// ValidateTurns returns an error of kind ErrInvalid naming
// <prefix>turns[i].role, .id or .ts for the first turn whose role is not
// one of the known roles or that CheckTurn refuses: the check every turn
// passes before it is stored, posted in an episode or to a live session.
func ValidateTurns(prefix string, turns []Turn) error {
	for i, t := range turns {
		if !t.Role.Valid() {
			return Invalidf("%sturns[%d].role %q is not user, assistant, tool or system", prefix, i, t.Role)
		}
		if err := CheckTurn(prefix, i, t); err != nil {
			return err
		}
	}
	return nil
}
