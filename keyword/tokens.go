package keyword

import (
	"unicode"
	"unicode/utf8"
)

// TokenCount is the number of tokens SQLite's unicode61 tokenizer (FTS5's,
// with its default remove_diacritics) finds in s: maximal runs of letters,
// numbers, private-use characters and nonspacing marks; everything else
// separates, "_" included. It is the length FTS5's bm25 gives a document,
// which a store ranking as SQLite does needs for the same texts
// (IndexTexts' words, a message's dates and speaker).
func TokenCount(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		var tok bool
		if c < utf8.RuneSelf {
			tok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			tok = r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Mn, r))
			i += size
		}
		if tok && !in {
			n++
		}
		in = tok
	}
	return n
}

// TrigramCount is the number of tokens SQLite's trigram tokenizer finds in
// s (IndexTexts' cjk): one for each run of three characters, across the
// lines too.
func TrigramCount(s string) int {
	return max(utf8.RuneCountInString(s)-2, 0)
}
