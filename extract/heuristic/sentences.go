package heuristic

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// sentence is one sentence of a message.
type sentence struct {
	text     string
	question bool
}

// splitSentences splits text at sentence ends (. ! ? ; … and their CJK
// forms, and line breaks). A period between digits or after a one-letter
// word or a common title does not end a sentence.
func splitSentences(text string) []sentence {
	text = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", `"`, "\u201d", `"`).Replace(text)
	var out []sentence
	var b strings.Builder
	flush := func(question bool) {
		s := strings.TrimSpace(b.String())
		b.Reset()
		if s == "" {
			if question && len(out) > 0 {
				out[len(out)-1].question = true
			}
			return
		}
		out = append(out, sentence{text: s, question: question})
	}
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '?', '？':
			flush(true)
		case '!', '！', ';', '；', '。', '…', '\n':
			flush(false)
		case '.':
			if i+1 < len(rs) && (unicode.IsDigit(rs[i+1]) || unicode.IsLetter(rs[i+1])) {
				b.WriteRune(r) // 3.5, e.g, example.com
				continue
			}
			if isAbbreviation(b.String()) {
				b.WriteRune(r)
				continue
			}
			flush(false)
		default:
			b.WriteRune(r)
		}
	}
	flush(false)
	return out
}

func isAbbreviation(before string) bool {
	i := strings.LastIndexFunc(before, func(r rune) bool { return !unicode.IsLetter(r) })
	w := strings.ToLower(before[i+1:])
	switch w {
	case "mr", "mrs", "ms", "dr", "st", "vs", "etc", "jr", "sr", "prof", "approx":
		return true
	}
	return utf8.RuneCountInString(w) == 1 && w != "i" && w != "a"
}

func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}
