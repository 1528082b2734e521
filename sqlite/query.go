package sqlite

import (
	"strings"

	"github.com/imprint-dev/imprint/keyword"
	"unicode"
	"unicode/utf8"
)

// maxQueryTerms bounds how many terms of a query reach FTS, so pasting a
// whole document as a query stays cheap.
const maxQueryTerms = 64

// ftsQuery is a keyword query split across the two indexes of a kind:
// words holds Latin (non-CJK) words and 2-character CJK terms for the word
// index; trigram holds CJK runs of three or more characters for the trigram
// index. Either may be empty; both empty means no term survived (the search
// returns nothing).
type ftsQuery struct {
	words   string
	trigram string
}

func (q ftsQuery) empty() bool { return q.trigram == "" && q.words == "" }

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

// buildQuery turns user text into FTS5 MATCH expressions. Words of two or
// more characters go to the word index (stemmed there, so "bookings" finds
// "booking"); CJK runs of exactly two characters go to the word index as a
// bigram, longer runs to the trigram index as a phrase (a substring match).
// Single characters other than digits are dropped: no index can serve
// them without a scan, and a lone Latin letter is noise.
// Terms are quoted, deduplicated case-insensitively and OR-ed.
//
// English stop words are dropped ("when did Caroline go" asks for
// caroline and go), unless nothing else is left, so a query made only of
// them still finds its words.
func buildQuery(text string) ftsQuery {
	var tri, words []string
	seen := map[string]bool{}
	toks := tokenize(text)
	content := false
	for _, t := range toks {
		if t.cjk || utf8.RuneCountInString(t.text) >= 2 && !keyword.IsStopWord(strings.ToLower(t.text)) {
			content = true
			break
		}
	}
	for _, t := range toks {
		if len(tri)+len(words) >= maxQueryTerms {
			break
		}
		term := strings.ToLower(t.text)
		if seen[term] || content && !t.cjk && keyword.IsStopWord(term) {
			continue
		}
		seen[term] = true
		n := utf8.RuneCountInString(term)
		switch {
		case n < 2 && !(term[0] >= '0' && term[0] <= '9'): // a day of the month is a term
		case t.cjk && n >= 3:
			tri = append(tri, quote(term))
		default:
			words = append(words, quote(term))
		}
	}
	return ftsQuery{words: strings.Join(words, " OR "), trigram: strings.Join(tri, " OR ")}
}

// indexTexts returns what the two indexes store for a text. words is the
// text's non-CJK words followed by every overlapping character pair of its
// CJK runs, space-separated (unicode61 then indexes each word and each pair
// as a token). cjk is the CJK runs alone, one per line, for the trigram
// index; it is empty for text without CJK runs of three or more characters.
// A hyphenated word is indexed as its parts and, after the text's words, as
// one word too, so "destress" finds "de-stress" and "email" finds "e-mail".
func indexTexts(s string) (words, cjk string) {
	words, cjk = splitIndexTexts(s)
	if j := hyphenJoins(s); j != "" {
		words += " " + j
	}
	return words, cjk
}

// hyphenJoins returns each hyphenated non-CJK word of s (letters, "-",
// letters, possibly more parts) written without its hyphens,
// space-separated; "" when s has none. It runs on every text indexed, so
// it only looks around the hyphens.
func hyphenJoins(s string) string {
	var b strings.Builder
	end := 0 // where the last compound ended
	for i := strings.IndexByte(s, '-'); i >= 0; {
		if i >= end && wordBefore(s, i) && wordAfter(s, i+1) {
			lo, hi := i, i+1
			for lo > 0 && (wordBefore(s, lo) || s[lo-1] == '-' && wordBefore(s, lo-1)) {
				_, n := utf8.DecodeLastRuneInString(s[:lo])
				lo -= n
			}
			for hi < len(s) && (wordAfter(s, hi) || s[hi] == '-' && wordAfter(s, hi+1)) {
				_, n := utf8.DecodeRuneInString(s[hi:])
				hi += n
			}
			if part := s[lo:hi]; !strings.ContainsFunc(part, isCJK) {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(strings.ReplaceAll(part, "-", ""))
			}
			end = hi
		}
		next := strings.IndexByte(s[i+1:], '-')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return b.String()
}

// wordBefore reports whether the rune that ends at s[i] is a word rune.
func wordBefore(s string, i int) bool {
	if i <= 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isWordRune(r)
}

// wordAfter reports whether the rune at s[i] is a word rune.
func wordAfter(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isWordRune(r)
}

// splitIndexTexts is indexTexts without the joined hyphenated words.
func splitIndexTexts(s string) (words, cjk string) {
	if isASCII(s) {
		return asciiWords(s), ""
	}
	var w, c strings.Builder
	sep := func(b *strings.Builder, ch byte) {
		if b.Len() > 0 {
			b.WriteByte(ch)
		}
	}
	for _, t := range tokenize(s) {
		if !t.cjk {
			sep(&w, ' ')
			w.WriteString(t.text)
			continue
		}
		rs := []rune(t.text)
		for i := 0; i+1 < len(rs); i++ {
			sep(&w, ' ')
			w.WriteRune(rs[i])
			w.WriteRune(rs[i+1])
		}
		if len(rs) >= 3 {
			sep(&c, '\n')
			c.WriteString(t.text)
		}
	}
	return w.String(), c.String()
}

// isASCII reports whether s holds only 7-bit characters.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiWords is tokenize's word output for 7-bit text, joined by spaces,
// without the per-rune Unicode table lookups.
func asciiWords(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		word := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
		switch {
		case word && !in && b.Len() > 0:
			b.WriteByte(' ')
			fallthrough
		case word:
			b.WriteByte(c)
		}
		in = word
	}
	return b.String()
}
