package promptguard

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// QuoteMarker is put before each line of untrusted text that would read as
// a prompt's own structure. It starts with a character no line of a
// prompt's structure starts with, so the marked line reads as quoted text.
const QuoteMarker = "(quoted) "

// baseHeaders are the labels of a chat transcript; a line of message text
// that starts with one reads as a turn of its own in any prompt.
var baseHeaders = []string{"system", "assistant", "user", "human", "developer"}

// Quoter marks the lines of untrusted text that read as the structure of
// one kind of prompt. The zero value knows only the shapes every prompt
// shares (see Structural). It is safe for concurrent use.
type Quoter struct {
	// headers are the section labels, each as its lower-case words.
	headers [][]string
}

// NewQuoter returns a Quoter for a prompt whose sections are labelled by
// headers ("NEW MESSAGES" for a line "NEW MESSAGES:"), matched whatever
// their case and spacing.
func NewQuoter(headers ...string) Quoter {
	var q Quoter
	for _, h := range append(append([]string(nil), baseHeaders...), headers...) {
		if f := strings.Fields(strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), ":"))); len(f) > 0 {
			q.headers = append(q.headers, f)
		}
	}
	return q
}

// Quote returns text with QuoteMarker put before every line that
// Structural reports, and nothing else changed. A line is what follows the
// start of text or any line break (\n, \r, \v, \f, U+0085, U+2028,
// U+2029), since a model may read any of them as one.
func (q Quoter) Quote(text string) string {
	var b strings.Builder
	start := 0
	for i := 0; ; {
		// i is the start of a line.
		if q.Structural(text[i:]) {
			if b.Len() == 0 {
				b.Grow(len(text) + 4*len(QuoteMarker))
			}
			b.WriteString(text[start:i])
			b.WriteString(QuoteMarker)
			start = i
		}
		j := nextLine(text, i)
		if j < 0 {
			break
		}
		i = j
	}
	if start == 0 && b.Len() == 0 {
		return text
	}
	b.WriteString(text[start:])
	return b.String()
}

// nextLine returns the start of the line after the one starting at i, or
// -1 when that line is the last.
func nextLine(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if isLineBreak(r) {
			return i
		}
	}
	return -1
}

func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// Structural reports whether line (up to its first line break) would read
// as structure of q's prompt: after leading spaces, invisible characters,
// quotes and Markdown marks ("## ", "**", "> ", "- "), it opens with a
// field in brackets (as a message block "[id] [role] [time]: " does), with
// one of q's headers or a transcript label ("System") followed by a colon,
// or with upper-case words followed by a colon ("NEW MESSAGES:", "NOTE:").
func (q Quoter) Structural(line string) bool {
	rest := strings.TrimLeftFunc(line, isLead)
	if rest == "" {
		return false
	}
	if end := strings.IndexFunc(rest, isLineBreak); end >= 0 {
		rest = rest[:end]
	}
	if r, _ := utf8.DecodeRuneInString(rest); r == '[' || r == '［' || r == '【' {
		return strings.ContainsAny(rest, "]］】")
	}
	if upperLabel(rest) {
		return true
	}
	for _, h := range q.headers {
		if hasHeader(rest, h) {
			return true
		}
	}
	return false
}

// isLead reports whether r may come before a line's first word without
// changing how the line reads: spaces, invisible format characters,
// quotes and Markdown marks.
func isLead(r rune) bool {
	if unicode.IsSpace(r) && !isLineBreak(r) || unicode.Is(unicode.Cf, r) {
		return true
	}
	return strings.ContainsRune("#*_>-+~=|`'\"•·“”‘’«»", r)
}

// isColon reports whether r reads as a colon.
func isColon(r rune) bool { return r == ':' || r == '：' || r == '﹕' || r == '꞉' }

// upperLabel reports whether s opens with upper-case words and a colon:
// at least two letters, none of them lower case, within 60 runes.
func upperLabel(s string) bool {
	letters := 0
	for i, r := range s {
		switch {
		case isColon(r):
			return letters >= 2
		case i > 240:
			return false
		case unicode.IsLetter(r):
			if !unicode.IsUpper(r) && !unicode.IsTitle(r) {
				return false
			}
			letters++
		case unicode.IsDigit(r), r == ' ', r == '\t', r == '_', r == '-', r == '/', r == '&':
		default:
			return false
		}
	}
	return false
}

// hasHeader reports whether s opens with the words of h, whatever their
// case, separated by spaces, then a colon.
func hasHeader(s string, h []string) bool {
	for k, w := range h {
		if k > 0 {
			t := strings.TrimLeftFunc(s, unicode.IsSpace)
			if len(t) == len(s) {
				return false
			}
			s = t
		}
		if len(s) < len(w) || !strings.EqualFold(s[:len(w)], w) {
			return false
		}
		s = s[len(w):]
	}
	r, _ := utf8.DecodeRuneInString(strings.TrimLeftFunc(s, unicode.IsSpace))
	return isColon(r)
}
