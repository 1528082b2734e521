package sqlite

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxQueryTerms bounds how many terms of a query reach FTS, so pasting a
// whole document as a query stays cheap.
const maxQueryTerms = 64

// ftsQuery is a keyword query split across the two indexes of a kind:
// trigram holds terms of three or more characters, bigram holds
// two-character terms. Either may be empty; both empty means no term
// survived (the search returns nothing).
type ftsQuery struct {
	trigram string
	bigram  string
}

func (q ftsQuery) empty() bool { return q.trigram == "" && q.bigram == "" }

// isCJK reports whether r is written without spaces between words (Han,
// kana, Hangul), so it is indexed by character n-grams rather than words.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		r == 'ー' // prolonged sound mark is Common, but belongs to katakana words
}

// isWordRune reports whether r is part of a non-CJK word. Underscore is,
// so identifiers such as tool names stay one term.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r)
}

// token is one run of the text: a word or a CJK run.
type token struct {
	text string
	cjk  bool
}

// tokenize splits s into words (letters, digits, _, combining marks) and CJK
// runs; everything else separates. Quotes, operators, parentheses, NUL and
// other punctuation never survive into a token.
func tokenize(s string) []token {
	var out []token
	start, cjk := -1, false
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, token{text: s[start:end], cjk: cjk})
		}
		start = -1
	}
	for i, r := range s {
		if r == utf8.RuneError {
			flush(i)
			continue
		}
		c := isCJK(r)
		switch {
		case c || isWordRune(r):
			if start >= 0 && c != cjk {
				flush(i)
			}
			if start < 0 {
				start, cjk = i, c
			}
		default:
			flush(i)
		}
	}
	flush(len(s))
	return out
}

// quote makes one FTS5 string literal: the term between double quotes with
// any double quote doubled, so it is matched as a phrase and never parsed
// as query syntax.
func quote(term string) string {
	return `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
}

// buildQuery turns user text into FTS5 MATCH expressions. Words and CJK runs
// of three or more characters go to the trigram index as quoted phrases
// (matching as substrings); two-character words and CJK runs go to the
// bigram index; single characters are dropped (no index can serve them
// without a scan). Terms are deduplicated case-insensitively and OR-ed.
func buildQuery(text string) ftsQuery {
	var tri, bi []string
	seen := map[string]bool{}
	for _, t := range tokenize(text) {
		if len(tri)+len(bi) >= maxQueryTerms {
			break
		}
		term := strings.ToLower(t.text)
		if seen[term] {
			continue
		}
		seen[term] = true
		switch n := utf8.RuneCountInString(term); {
		case n >= 3:
			tri = append(tri, quote(term))
		case n == 2:
			bi = append(bi, quote(term))
		}
	}
	return ftsQuery{trigram: strings.Join(tri, " OR "), bigram: strings.Join(bi, " OR ")}
}

// bigramText is what the bigram side index stores for a text: every
// overlapping pair of characters of each CJK run, and every two-character
// word, lowercased and separated by spaces. unicode61 then indexes each
// pair as one token.
func bigramText(s string) string {
	var b strings.Builder
	for _, t := range tokenize(s) {
		if !t.cjk {
			if utf8.RuneCountInString(t.text) == 2 {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(strings.ToLower(t.text))
			}
			continue
		}
		rs := []rune(t.text)
		for i := 0; i+1 < len(rs); i++ {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(rs[i])
			b.WriteRune(rs[i+1])
		}
	}
	return b.String()
}
