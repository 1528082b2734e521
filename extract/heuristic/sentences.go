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

// curlyQuotes turns curly quotes into straight ones.
var curlyQuotes = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", `"`, "\u201d", `"`)

// splitSentences splits text at sentence ends (. ! ? ; … and their CJK
// forms, and line breaks). A period between digits or after a one-letter
// word or a common title does not end a sentence.
func splitSentences(text string) []sentence {
	if strings.Contains(text, "\xe2\x80") && strings.ContainsAny(text, "\u2019\u2018\u201c\u201d") {
		text = curlyQuotes.Replace(text)
	}
	if !utf8.ValidString(text) {
		text = string([]rune(text)) // each invalid byte becomes U+FFFD
	}
	var out []sentence
	// A sentence is text[start:i] less the space around it: the only
	// characters left out of one are the ends that split it.
	start := 0
	flush := func(end int, question bool) {
		s := strings.TrimSpace(text[start:end])
		if s == "" {
			if question && len(out) > 0 {
				out[len(out)-1].question = true
			}
			return
		}
		out = append(out, sentence{text: s, question: question})
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch r {
		case '?', '？':
			flush(i, true)
			start = i + n
		case '!', '！', ';', '；', '。', '…', '\n':
			flush(i, false)
			start = i + n
		case '.':
			if next, _ := utf8.DecodeRuneInString(text[i+n:]); i+n < len(text) && (unicode.IsDigit(next) || unicode.IsLetter(next)) {
				break // 3.5, e.g, example.com
			}
			if isAbbreviation(text[start:i]) {
				break
			}
			flush(i, false)
			start = i + n
		}
		i += n
	}
	flush(len(text), false)
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
		if r >= 0x2e80 && unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}
