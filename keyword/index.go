package keyword

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The keyword index of every store (SQLite's FTS5, PostgreSQL's tsvector
// and pg_trgm) holds the same words, made here, and answers the same
// terms, so that a keyword search finds the same records on either.

// MaxQueryTerms bounds how many terms of a query reach the index, so
// pasting a whole document as a query stays cheap.
const MaxQueryTerms = 64

// Terms is a keyword query split across the two indexes of a kind: Words
// holds non-CJK words and 2-character CJK terms for the word index;
// Trigram holds CJK runs of three or more characters for the substring
// (trigram) index. Terms are lower-case and deduplicated. Both empty means
// no term survived (the search returns nothing).
type Terms struct {
	Words   []string
	Trigram []string
}

// Empty reports whether no term survived.
func (q Terms) Empty() bool { return len(q.Words) == 0 && len(q.Trigram) == 0 }

// Query turns user text into terms. Words of two or more characters go to
// the word index (stemmed there, so "bookings" finds "booking"); CJK runs
// of exactly two characters go to the word index as a bigram, longer runs
// to the trigram index as a phrase (a substring match). Single characters
// other than digits are dropped: no index can serve them without a scan,
// and a lone Latin letter is noise. Terms are deduplicated
// case-insensitively, at most MaxQueryTerms of them.
//
// English stop words are dropped ("when did Caroline go" asks for
// caroline and go), unless nothing else is left, so a query made only of
// them still finds its words.
func Query(text string) Terms {
	var out Terms
	seen := map[string]bool{}
	toks := Tokenize(text)
	content := false
	for _, t := range toks {
		if t.CJK || utf8.RuneCountInString(t.Text) >= 2 && !IsStopWord(strings.ToLower(t.Text)) {
			content = true
			break
		}
	}
	for _, t := range toks {
		if len(out.Trigram)+len(out.Words) >= MaxQueryTerms {
			break
		}
		term := strings.ToLower(t.Text)
		if seen[term] || content && !t.CJK && IsStopWord(term) {
			continue
		}
		seen[term] = true
		n := utf8.RuneCountInString(term)
		switch {
		case n < 2 && !(term[0] >= '0' && term[0] <= '9'): // a day of the month is a term
		case t.CJK && n >= 3:
			out.Trigram = append(out.Trigram, term)
		default:
			out.Words = append(out.Words, term)
		}
	}
	return out
}

// IsCJK reports whether r is written without spaces between words (Han,
// kana, Hangul), so it is indexed by character n-grams rather than words.
func IsCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		r == 'ー' // prolonged sound mark is Common, but belongs to katakana words
}

// IsWordRune reports whether r is part of a non-CJK word. Underscore is,
// so identifiers such as tool names stay one term.
func IsWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r)
}

// Token is one run of a text: a word or a CJK run.
type Token struct {
	Text string
	CJK  bool
}

// Tokenize splits s into words (letters, digits, _, combining marks) and CJK
// runs; everything else separates. Quotes, operators, parentheses, NUL and
// other punctuation never survive into a token.
func Tokenize(s string) []Token {
	var out []Token
	start, cjk := -1, false
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, Token{Text: s[start:end], CJK: cjk})
		}
		start = -1
	}
	for i, r := range s {
		if r == utf8.RuneError {
			flush(i)
			continue
		}
		c := IsCJK(r)
		switch {
		case c || IsWordRune(r):
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

// IndexTexts returns what the two indexes store for a text. words is the
// text's non-CJK words followed by every overlapping character pair of its
// CJK runs, space-separated (unicode61 then indexes each word and each pair
// as a token). cjk is the CJK runs alone, one per line, for the trigram
// index; it is empty for text without CJK runs of three or more characters.
// A hyphenated word is indexed as its parts and, after the text's words, as
// one word too, so "destress" finds "de-stress" and "email" finds "e-mail".
func IndexTexts(s string) (words, cjk string) {
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
			if part := s[lo:hi]; !strings.ContainsFunc(part, IsCJK) {
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
	return IsWordRune(r)
}

// wordAfter reports whether the rune at s[i] is a word rune.
func wordAfter(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return IsWordRune(r)
}

// splitIndexTexts is IndexTexts without the joined hyphenated words.
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
	for _, t := range Tokenize(s) {
		if !t.CJK {
			sep(&w, ' ')
			w.WriteString(t.Text)
			continue
		}
		rs := []rune(t.Text)
		for i := 0; i+1 < len(rs); i++ {
			sep(&w, ' ')
			w.WriteRune(rs[i])
			w.WriteRune(rs[i+1])
		}
		if len(rs) >= 3 {
			sep(&c, '\n')
			c.WriteString(t.Text)
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

// asciiWords is Tokenize's word output for 7-bit text, joined by spaces,
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

// MessageDoc is what the keyword index holds for one message: its own
// text, the dates it is about, and its speaker (each indexed apart).
type MessageDoc struct {
	Text, Date, Who string
}

// NewMessageDoc makes the index document of a message (its content, time
// and speaker) that follows a message of prevSpeaker ("" for the session's
// first). Between people, the name of the one it answers is most often a
// form of address ("Wow, Melanie!"), which says nothing of what the
// message is about: it is left out of the message's own words, so a
// question about Melanie finds what Melanie said.
func NewMessageDoc(content string, at time.Time, speaker, prevSpeaker string) MessageDoc {
	text := content
	if prevSpeaker != "" && !strings.EqualFold(prevSpeaker, speaker) {
		text = withoutWord(text, prevSpeaker)
	}
	return MessageDoc{Text: text, Date: DateTerms(at, content), Who: speaker}
}

// withoutWord returns s with every whole-word occurrence of w (any case)
// replaced by a space.
func withoutWord(s, w string) string {
	lw := strings.ToLower(w)
	ls := strings.ToLower(s)
	if lw == "" || !strings.Contains(ls, lw) || len(ls) != len(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.Index(ls[i:], lw)
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i
		end := j + len(lw)
		if isBoundary(s, j-1) && isBoundary(s, end) {
			b.WriteString(s[i:j])
			b.WriteByte(' ')
		} else {
			b.WriteString(s[i:end])
		}
		i = end
	}
	return b.String()
}

// isBoundary reports whether s has no word character at byte i.
func isBoundary(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return !IsWordRune(r)
}

// QueryNames returns the lower-case words of a query that could name a
// speaker (no stop words, no CJK).
func QueryNames(text string) map[string]bool {
	out := map[string]bool{}
	for _, t := range Tokenize(text) {
		if w := strings.ToLower(t.Text); !t.CJK && !IsStopWord(w) {
			out[w] = true
		}
	}
	return out
}

// NamesSpeaker reports whether one of the speaker's words is among names.
func NamesSpeaker(names map[string]bool, speaker string) bool {
	for _, t := range Tokenize(speaker) {
		if names[strings.ToLower(t.Text)] {
			return true
		}
	}
	return false
}
