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
	for _, p := range timePhrase.FindAllString(text, -1) {
		p = strings.ToLower(p)
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
