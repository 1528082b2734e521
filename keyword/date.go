package keyword

import (
	"strconv"
	"strings"
	"time"
)

// DateTerms returns the absolute dates a message of time at is about, as
// words a keyword index can match: its own date ("8 May 2023 Monday") and
// the dates its relative time phrases name, resolved against at as
// RelativeDay resolves them for extraction ("yesterday" → "7 May 2023
// Sunday", "last weekend" → its Saturday and Sunday, "two weeks ago" →
// "24 April 2023 Monday") or, for a month or a year, as that month or year
// ("last month" → "April 2023", "last year" → "2022"). Each date is written
// day, month name, year, so a query for "May 2023", "8 May" or "2023" finds
// it. The phrases are English; a phrase that could be a plan or a report
// ("on friday") is taken as a report. A zero at gives "".
func DateTerms(at time.Time, text string) string {
	if at.IsZero() {
		return ""
	}
	at = at.UTC()
	terms := []string{dayTerms(at)}
	seen := map[string]bool{terms[0]: true}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			terms = append(terms, s)
		}
	}
	for _, p := range timePhrasesNearTimeWords(text) {
		if d, ok := RelativeDay(p, at, false); ok {
			add(dayTerms(d))
			if strings.HasSuffix(p, "weekend") {
				add(dayTerms(d.AddDate(0, 0, 1)))
			}
			continue
		}
		add(monthOrYear(p, at))
	}
	return strings.Join(terms, " ")
}

// dayTerms writes one day as "8 May 2023 Monday".
func dayTerms(t time.Time) string {
	return strconv.Itoa(t.Day()) + " " + t.Month().String() + " " + strconv.Itoa(t.Year()) + " " + t.Weekday().String()
}

// monthOrYear resolves a phrase naming a month or a year ("last month",
// "next year", "three months ago") against at, "" for any other.
func monthOrYear(p string, at time.Time) string {
	month := func(n int) string {
		t := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, n, 0)
		return t.Month().String() + " " + strconv.Itoa(t.Year())
	}
	year := func(n int) string { return strconv.Itoa(at.Year() + n) }
	switch p {
	case "last month":
		return month(-1)
	case "next month":
		return month(1)
	case "last year":
		return year(-1)
	case "next year":
		return year(1)
	}
	if rest, ok := strings.CutSuffix(p, " ago"); ok {
		if i := strings.LastIndexByte(rest, ' '); i > 0 {
			if n, ok := number(rest[:i]); ok {
				switch strings.TrimSuffix(rest[i+1:], "s") {
				case "month":
					return month(-n)
				case "year":
					return year(-n)
				}
			}
		}
	}
	return ""
}

// timeWords are the words without one of which no phrase that names a
// date other than the message's own can match timePhrase ("today",
// "recently" and "this month" name none).
var timeWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`yesterday tomorrow last next ago weekend weekends day days week weeks
		monday tuesday wednesday thursday friday saturday sunday`) {
		timeWords[w] = true
	}
}

// timePhrasesNearTimeWords returns the time phrases of text, in lower
// case: timePhrase runs only on the few words around each of timeWords
// (no phrase is longer than five words, nor without one of them). It runs
// on every message recorded, so the words are looked up without
// allocating, and most messages, having none, never reach the slow
// pattern.
func timePhrasesNearTimeWords(text string) []string {
	var out []string
	var buf [9]byte
	n, long, start := 0, false, 0
	lo, hi := -1, -1 // the window being grown
	flush := func() {
		if lo >= 0 {
			out = append(out, findTimePhrases(text[lo:hi])...)
		}
	}
	for i := 0; i <= len(text); i++ {
		var c byte
		if i < len(text) {
			c = text[i]
		}
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			if n == 0 {
				start = i
			}
			if n == len(buf) {
				long = true
				continue
			}
			buf[n] = c | 0x20
			n++
			continue
		}
		if !long && n >= 3 && timeWords[string(buf[:n])] {
			l, h := wordsAround(text, start, i, 4)
			if l > hi { // a window of its own
				flush()
				lo = l
			}
			hi = h
		}
		n, long = 0, false
	}
	flush()
	return out
}

// wordsAround widens text[start:end] by up to k words on each side.
func wordsAround(text string, start, end, k int) (int, int) {
	lo := start
	for w := 0; w < k && lo > 0; w++ {
		lo--
		for lo > 0 && text[lo-1] == ' ' {
			lo--
		}
		for lo > 0 && text[lo-1] != ' ' {
			lo--
		}
	}
	hi := end
	for w := 0; w < k && hi < len(text); w++ {
		for hi < len(text) && text[hi] == ' ' {
			hi++
		}
		for hi < len(text) && text[hi] != ' ' {
			hi++
		}
	}
	return lo, hi
}
