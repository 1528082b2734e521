package postgres

import "strings"

// The keyword index's dictionary, imprint_stem, is PostgreSQL's Snowball
// dictionary with Porter's original stemmer (schema.sql). For a chunk of
// ASCII letters alone, which the server's parser takes as one asciiword,
// the tsvector is that word lowercased and stemmed at position 1; the
// store stems such chunks itself (porterStem, the algorithm as Snowball
// defines it) instead of asking the server, and asks only for the others
// (digits, underscores, non-ASCII letters). It does so only when the
// schema's configuration stems with Porter's stemmer alone
// (porterDictionary); one that kept the English stemmer is left to the
// server. TestPorterMatchesServer
// compares the two over the test data's words and every word of up to
// three letters.

// maxLocalStem bounds the chunks stemmed here; longer ones go to the
// server (whose dictionary leaves words over 1,000 bytes unstemmed).
const maxLocalStem = 64

// localLexeme returns the lexeme the server's parser and dictionary make
// of chunk when chunk is ASCII letters alone (and not too long to stem
// here), and whether it is.
func localLexeme(chunk string) (string, bool) {
	if len(chunk) == 0 || len(chunk) > maxLocalStem {
		return "", false
	}
	var buf [maxLocalStem]byte
	b := buf[:len(chunk)]
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		switch {
		case c >= 'a' && c <= 'z':
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		default:
			return "", false
		}
		b[i] = c
	}
	s := porterStem(b)
	if len(s) == 0 {
		// The dictionary keeps a word whose stem is empty ("s") as it is.
		return strings.ToLower(chunk), true
	}
	return string(s), true
}

// porterStem stems the lowercase ASCII word b in place and returns the
// stem: Porter's algorithm as Snowball's porter.sbl states it. A 'y' that
// starts the word or follows a vowel is a consonant (written 'Y' while
// stemming); R1 is the region after the first non-vowel that follows a
// vowel, R2 the same region within R1.
func porterStem(b []byte) []byte {
	n := len(b)
	if n == 0 {
		return b
	}
	yFound := false
	if b[0] == 'y' {
		b[0], yFound = 'Y', true
	}
	for i := 0; i+1 < n; i++ {
		if isPorterVowel(b[i]) && b[i+1] == 'y' {
			b[i+1], yFound = 'Y', true
			i++
		}
	}
	p1, p2 := n, n
	if i, ok := pastVowelConsonant(b, 0); ok {
		p1 = i
		if j, ok := pastVowelConsonant(b, i); ok {
			p2 = j
		}
	}
	w := &porterWord{b: b, p1: p1, p2: p2}
	w.step1a()
	w.step1b()
	w.step1c()
	w.step2()
	w.step3()
	w.step4()
	w.step5a()
	w.step5b()
	if yFound {
		for i, c := range w.b {
			if c == 'Y' {
				w.b[i] = 'y'
			}
		}
	}
	return w.b
}

// isPorterVowel reports whether c is in Snowball's v: a e i o u y (a 'Y',
// a consonant y, is not).
func isPorterVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// isVWXY reports whether c is in v_WXY: a vowel, w, x or Y.
func isVWXY(c byte) bool { return isPorterVowel(c) || c == 'w' || c == 'x' || c == 'Y' }

// pastVowelConsonant returns the position after the first non-vowel that
// follows a vowel at or after from ("gopast v gopast non-v").
func pastVowelConsonant(b []byte, from int) (int, bool) {
	i := from
	for i < len(b) && !isPorterVowel(b[i]) {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	i++
	for i < len(b) && isPorterVowel(b[i]) {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	return i + 1, true
}

// porterWord is a word being stemmed with its regions' starts.
type porterWord struct {
	b      []byte
	p1, p2 int
}

// suffix returns the longest of suffixes that b ends with, and its index
// (-1 for none).
func (w *porterWord) suffix(suffixes ...string) (string, int) {
	best, at := "", -1
	for i, s := range suffixes {
		if len(s) > len(best) && len(s) <= len(w.b) && string(w.b[len(w.b)-len(s):]) == s {
			best, at = s, i
		}
	}
	return best, at
}

// replace replaces the last n bytes of the word with s.
func (w *porterWord) replace(n int, s string) {
	w.b = append(w.b[:len(w.b)-n], s...)
}

// hasVowelBefore reports whether b[:end] has a vowel.
func (w *porterWord) hasVowelBefore(end int) bool {
	for i := end - 1; i >= 0; i-- {
		if isPorterVowel(w.b[i]) {
			return true
		}
	}
	return false
}

// shortAt reports whether the three letters before end are a non-vowel,
// a vowel and a letter not in v_WXY (Snowball's shortv).
func (w *porterWord) shortAt(end int) bool {
	return end >= 3 && !isVWXY(w.b[end-1]) && isPorterVowel(w.b[end-2]) && !isPorterVowel(w.b[end-3])
}

func (w *porterWord) step1a() {
	switch s, _ := w.suffix("sses", "ies", "ss", "s"); s {
	case "sses":
		w.replace(4, "ss")
	case "ies":
		w.replace(3, "i")
	case "s":
		w.replace(1, "")
	}
}

func (w *porterWord) step1b() {
	s, _ := w.suffix("eed", "ed", "ing")
	switch s {
	case "":
		return
	case "eed":
		if w.p1 <= len(w.b)-3 {
			w.replace(3, "ee")
		}
		return
	}
	if !w.hasVowelBefore(len(w.b) - len(s)) {
		return
	}
	w.replace(len(s), "")
	switch t, _ := w.suffix("at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"); t {
	case "at", "bl", "iz":
		w.b = append(w.b, 'e')
	case "":
		if len(w.b) == w.p1 && w.shortAt(len(w.b)) {
			w.b = append(w.b, 'e')
		}
	default:
		w.replace(1, "")
	}
}

func (w *porterWord) step1c() {
	n := len(w.b)
	if n > 0 && (w.b[n-1] == 'y' || w.b[n-1] == 'Y') && w.hasVowelBefore(n-1) {
		w.b[n-1] = 'i'
	}
}

// The suffixes of steps 2, 3 and 4 and what each becomes.
var (
	step2Suffixes = []string{"tional", "enci", "anci", "abli", "entli", "eli", "izer", "ization",
		"ational", "ation", "ator", "alli", "alism", "aliti", "fulness", "ousli", "ousness",
		"iveness", "iviti", "biliti"}
	step2To = []string{"tion", "ence", "ance", "able", "ent", "e", "ize", "ize",
		"ate", "ate", "ate", "al", "al", "al", "ful", "ous", "ous",
		"ive", "ive", "ble"}
	step3Suffixes = []string{"alize", "icate", "iciti", "ical", "ative", "ful", "ness"}
	step3To       = []string{"al", "ic", "ic", "ic", "", "", ""}
	step4Suffixes = []string{"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement",
		"ment", "ent", "ou", "ism", "ate", "iti", "ous", "ive", "ize", "ion"}
)

func (w *porterWord) step2() {
	if s, i := w.suffix(step2Suffixes...); i >= 0 && w.p1 <= len(w.b)-len(s) {
		w.replace(len(s), step2To[i])
	}
}

func (w *porterWord) step3() {
	if s, i := w.suffix(step3Suffixes...); i >= 0 && w.p1 <= len(w.b)-len(s) {
		w.replace(len(s), step3To[i])
	}
}

func (w *porterWord) step4() {
	s, i := w.suffix(step4Suffixes...)
	if i < 0 {
		return
	}
	start := len(w.b) - len(s)
	if w.p2 > start {
		return
	}
	if s == "ion" && (start == 0 || w.b[start-1] != 's' && w.b[start-1] != 't') {
		return
	}
	w.replace(len(s), "")
}

func (w *porterWord) step5a() {
	n := len(w.b)
	if n == 0 || w.b[n-1] != 'e' {
		return
	}
	if w.p2 <= n-1 || w.p1 <= n-1 && !w.shortAt(n-1) {
		w.replace(1, "")
	}
}

func (w *porterWord) step5b() {
	n := len(w.b)
	if n >= 2 && w.b[n-1] == 'l' && w.p2 <= n-1 && w.b[n-2] == 'l' {
		w.replace(1, "")
	}
}
