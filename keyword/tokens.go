package keyword

import (
	"unicode"
	"unicode/utf8"
)

// TokenCount is the number of tokens SQLite's unicode61 tokenizer (FTS5's,
// with its default remove_diacritics) finds in s: runs of letters,
// numbers and private-use characters, with the combining diacritics it
// removes (ftsDiacritics) inside them; everything else separates, "_" and
// other nonspacing marks included. It is the document length of FTS5's
// bm25, which a store ranking as SQLite does needs for the same texts
// (IndexTexts' words, a message's dates and speaker). It is exact for the
// scripts FuzzTokenCount (package sqlite) draws from — Latin, Greek,
// Cyrillic, CJK, kana and Hangul —; SQLite's Unicode tables are older than
// Go's, and a letter or mark assigned since may count apart.
func TokenCount(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		// mark: a diacritic unicode61 removes, which continues a token
		// but never makes one alone.
		var tok, mark bool
		if c < utf8.RuneSelf {
			tok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			mark = unicode.Is(ftsDiacritics, r)
			tok = r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r))
			i += size
		}
		switch {
		case tok && !in:
			n++
			in = true
		case !tok && !(mark && in):
			in = false
		}
	}
	return n
}

// TrigramCount is the number of tokens SQLite's trigram tokenizer finds in
// s (IndexTexts' cjk): one for each run of three characters, across the
// lines too.
func TrigramCount(s string) int {
	return max(utf8.RuneCountInString(s)-2, 0)
}

// ftsDiacritics are the combining marks unicode61 removes with
// remove_diacritics 1 (SQLite's sqlite3Fts5UnicodeIsdiacritic), measured
// on SQLite: a token holds them, and they alone make none.
var ftsDiacritics = &unicode.RangeTable{R16: []unicode.Range16{
	{Lo: 0x300, Hi: 0x304, Stride: 1}, {Lo: 0x306, Hi: 0x30c, Stride: 1}, {Lo: 0x30f, Hi: 0x311, Stride: 2},
	{Lo: 0x31b, Hi: 0x31b, Stride: 1}, {Lo: 0x323, Hi: 0x328, Stride: 1}, {Lo: 0x32d, Hi: 0x32e, Stride: 1},
	{Lo: 0x330, Hi: 0x331, Stride: 1},
}}
