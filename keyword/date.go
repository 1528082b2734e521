package keyword

import (
	"strconv"
	"strings"
	"time"
	"unicode"
)

// DateTerms returns the absolute dates a message of time at is about, as
// words a keyword index can match: its own date ("8 May 2023 Monday") and
// the dates its relative time phrases name, resolved against at
// ("yesterday" → "7 May 2023 Sunday", "last month" → "April 2023", "two
// weeks ago" → "24 April 2023 Monday", "last Friday" → "5 May 2023
// Friday"). Each date is written day, month name, year, so a query for
// "May 2023", "8 May" or "2023" finds it. The phrases are English; a zero
// at gives "".
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
	words := lowerWords(text)
	for i := range words {
		for _, r := range relativeAt(words, i, at) {
			add(r)
		}
	}
	return strings.Join(terms, " ")
}

// dayTerms writes one day as "8 May 2023 Monday".
func dayTerms(t time.Time) string {
	return strconv.Itoa(t.Day()) + " " + t.Month().String() + " " + strconv.Itoa(t.Year()) + " " + t.Weekday().String()
}

func monthTerms(t time.Time) string { return t.Month().String() + " " + strconv.Itoa(t.Year()) }

// lowerWords splits text into lower-case words of letters and digits.
func lowerWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

var counts = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3,
}

// relativeAt resolves the relative time phrase starting at words[i], if
// any, to the date terms it names.
func relativeAt(words []string, i int, at time.Time) []string {
	w := words[i]
	next := func(k int) string {
		if i+k >= 0 && i+k < len(words) {
			return words[i+k]
		}
		return ""
	}
	day := func(d int) []string { return []string{dayTerms(at.AddDate(0, 0, d))} }
	switch w {
	case "yesterday":
		if next(-1) == "before" && i >= 2 && words[i-2] == "day" {
			return day(-2)
		}
		return day(-1)
	case "tomorrow":
		return day(1)
	case "tonight", "today":
		return nil // the message's own date
	case "last", "next", "this":
		sign := 1
		if w == "last" {
			sign = -1
		}
		switch u := next(1); u {
		case "night":
			if w == "last" {
				return day(-1)
			}
		case "week":
			if w == "this" {
				return nil
			}
			return day(7 * sign)
		case "weekend":
			return weekend(at, sign)
		case "month":
			if w == "this" {
				return nil
			}
			return []string{monthTerms(firstOfMonth(at).AddDate(0, sign, 0))}
		case "year":
			if w == "this" {
				return nil
			}
			return []string{strconv.Itoa(at.Year() + sign)}
		default:
			if wd, ok := weekdays[u]; ok {
				return []string{dayTerms(weekday(at, wd, w))}
			}
		}
	case "ago":
		// "<n> <unit>s ago", "a couple of days ago", "a few weeks ago"
		if i < 2 {
			return nil
		}
		unit := strings.TrimSuffix(words[i-1], "s")
		n, ok := counts[words[i-2]]
		if !ok {
			if v, err := strconv.Atoi(words[i-2]); err == nil && v > 0 && v < 400 {
				n, ok = v, true
			} else if words[i-2] == "of" && i >= 3 {
				n, ok = counts[words[i-3]]
			}
		}
		if !ok {
			return nil
		}
		switch unit {
		case "day":
			return day(-n)
		case "week":
			return day(-7 * n)
		case "month":
			return []string{monthTerms(firstOfMonth(at).AddDate(0, -n, 0))}
		case "year":
			return []string{strconv.Itoa(at.Year() - n)}
		}
	}
	return nil
}

func firstOfMonth(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// weekend returns the Saturday and Sunday before at (sign -1) or after it
// (sign 1).
func weekend(at time.Time, sign int) []string {
	sat := weekday(at, time.Saturday, map[int]string{-1: "last", 1: "next"}[sign])
	return []string{dayTerms(sat), dayTerms(sat.AddDate(0, 0, 1))}
}

// weekday returns the day named wd that "last", "next" or "this" names
// from at: last is the latest one strictly before at, next and this the
// earliest one strictly after (this on the same weekday is at itself).
func weekday(at time.Time, wd time.Weekday, rel string) time.Time {
	d := int(wd - at.Weekday())
	switch rel {
	case "last":
		if d >= 0 {
			d -= 7
		}
	case "this":
		if d < 0 {
			d += 7
		}
	default:
		if d <= 0 {
			d += 7
		}
	}
	return at.AddDate(0, 0, d)
}
