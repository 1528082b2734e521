package keyword

import (
	"regexp"
	"strings"
	"time"
)

// timePhrase matches an English relative time phrase in ASCII-lower-cased
// text (asciiLower): a case-sensitive pattern runs several times faster
// than the same one with (?i), and lower-casing ASCII alone keeps every
// byte where it was.
var timePhrase = regexp.MustCompile(`\b(?:the day before yesterday|yesterday|today|tonight|tomorrow|this (?:morning|afternoon|evening|week|weekend|month|year)|earlier today|later today|last (?:night|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|next (?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:on|this) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|the other day|(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+|a few|few|a couple of|couple of|a couple) (?:days?|weeks?|weekends?|months?|years?) ago|in (?:a|one|two|three|four|five|\d+|a few|a couple of) (?:days?|weeks?)|recently|lately|just now)\b`)

// FindTimePhrase returns the first English relative time phrase in s
// ("yesterday", "Last weekend", "a couple of days ago", ...), as s writes
// it, "" when none.
func FindTimePhrase(s string) string {
	if !mayHaveTimePhrase(s) {
		return ""
	}
	loc := timePhrase.FindStringIndex(asciiLower(s))
	if loc == nil {
		return ""
	}
	return s[loc[0]:loc[1]]
}

// findTimePhrases returns every English relative time phrase in s, in
// lower case.
func findTimePhrases(s string) []string {
	if !mayHaveTimePhrase(s) {
		return nil
	}
	return timePhrase.FindAllString(asciiLower(s), -1)
}

// Words of timePhrase, for mayHaveTimePhrase.
const (
	tpThis = 1 << iota // this, last, next or on: before a unit or a weekday
	tpUnit             // a unit or a weekday after them
	tpIn
	tpDays // day(s) or week(s), after "in" and a number
	tpJust
	tpNow
	tpOther
	tpDay
)

// mayHaveTimePhrase is a cheap necessary condition for timePhrase to match
// s lower-cased: every word of a match is a whole ASCII word of s (the
// pattern is bounded by \b and its words by spaces), and each of its
// phrases has "yesterday", "today", "tonight", "tomorrow", "ago",
// "recently" or "lately", or "just" and "now", "other" and "day", "in"
// and a day or week, or "this", "last", "next" or "on" and a unit of
// time or a weekday.
func mayHaveTimePhrase(s string) bool {
	var seen int
	var buf [16]byte
	for i := 0; i < len(s); {
		if !isASCIIWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isASCIIWordByte(s[j]) {
			j++
		}
		if j-i > len(buf) || j-i < 2 {
			i = j
			continue
		}
		w := buf[:j-i]
		for k := range w {
			c := s[i+k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			w[k] = c
		}
		i = j
		switch string(w) {
		case "yesterday", "today", "tonight", "tomorrow", "ago", "recently", "lately":
			return true
		case "this", "last", "next", "on":
			seen |= tpThis
		case "morning", "afternoon", "evening", "weekend", "month", "year", "night",
			"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday":
			seen |= tpUnit
		case "week":
			seen |= tpUnit | tpDays
		case "weeks", "days":
			seen |= tpDays
		case "day":
			seen |= tpDays | tpDay
		case "in":
			seen |= tpIn
		case "just":
			seen |= tpJust
		case "now":
			seen |= tpNow
		case "other":
			seen |= tpOther
		}
	}
	return seen&(tpThis|tpUnit) == tpThis|tpUnit || seen&(tpIn|tpDays) == tpIn|tpDays ||
		seen&(tpJust|tpNow) == tpJust|tpNow || seen&(tpOther|tpDay) == tpOther|tpDay
}

func isASCIIWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// asciiLower lower-cases the ASCII letters of s and nothing else, so every
// byte stays where it was.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

var weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
	"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

var numbers = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a couple": 2, "a few": 3, "few": 3}

var agoPhrase = regexp.MustCompile(`^(.+?) (days?|weeks?) ago$`)
var inPhrase = regexp.MustCompile(`^in (.+?) (days?|weeks?)$`)

// RelativeDay returns the UTC date an English relative time phrase (lower
// case, as FindTimePhrase finds it: "yesterday", "last friday", "two weeks
// ago", "in three days", "last weekend" → its Saturday) points at, counted
// from ts; false for a phrase that names no single day ("last month",
// "recently") or a zero ts. future says whether the sentence is a plan,
// which decides "on friday" (the coming one) against a report (the last
// one).
func RelativeDay(expr string, ts time.Time, future bool) (time.Time, bool) {
	if ts.IsZero() {
		return time.Time{}, false
	}
	day := time.Date(ts.UTC().Year(), ts.UTC().Month(), ts.UTC().Day(), 0, 0, 0, 0, time.UTC)
	switch expr {
	case "today", "tonight", "this morning", "this afternoon", "this evening", "earlier today", "later today", "just now":
		return day, true
	case "yesterday", "last night":
		return day.AddDate(0, 0, -1), true
	case "the day before yesterday":
		return day.AddDate(0, 0, -2), true
	case "tomorrow":
		return day.AddDate(0, 0, 1), true
	case "last week":
		return day.AddDate(0, 0, -7), true
	case "next week":
		return day.AddDate(0, 0, 7), true
	case "last weekend":
		return lastWeekday(day, time.Saturday, true), true
	case "this weekend":
		if future {
			return nextWeekday(day, time.Saturday, true), true
		}
		return lastWeekday(day, time.Saturday, false), true
	case "next weekend":
		return nextWeekday(day, time.Saturday, false), true
	}
	if m := agoPhrase.FindStringSubmatch(expr); m != nil {
		n, ok := number(m[1])
		if !ok {
			return time.Time{}, false
		}
		if strings.HasPrefix(m[2], "week") {
			n *= 7
		}
		return day.AddDate(0, 0, -n), true
	}
	if m := inPhrase.FindStringSubmatch(expr); m != nil {
		n, ok := number(m[1])
		if !ok {
			return time.Time{}, false
		}
		if strings.HasPrefix(m[2], "week") {
			n *= 7
		}
		return day.AddDate(0, 0, n), true
	}
	if f := strings.Fields(expr); len(f) == 2 {
		if wd, ok := weekdays[f[1]]; ok {
			switch f[0] {
			case "last":
				return lastWeekday(day, wd, false), true
			case "next":
				return nextWeekday(day, wd, false), true
			default: // on, this
				if future {
					return nextWeekday(day, wd, true), true
				}
				return lastWeekday(day, wd, false), true
			}
		}
	}
	return time.Time{}, false
}

func number(s string) (int, bool) {
	if n, ok := numbers[s]; ok {
		return n, true
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' || n > 10000 {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, s != ""
}

// lastWeekday returns the latest day before day that falls on wd. With
// skipThisWeekend, a Saturday or Sunday day looks back to the weekend
// before ("last weekend" said on a Sunday).
func lastWeekday(day time.Time, wd time.Weekday, skipThisWeekend bool) time.Time {
	back := (int(day.Weekday()) - int(wd) + 7) % 7
	if back == 0 {
		back = 7
	}
	d := day.AddDate(0, 0, -back)
	if skipThisWeekend && (day.Weekday() == time.Sunday) {
		d = d.AddDate(0, 0, -7)
	}
	return d
}

// nextWeekday returns the first day after day that falls on wd, or day
// itself when orToday and it falls on wd.
func nextWeekday(day time.Time, wd time.Weekday, orToday bool) time.Time {
	ahead := (int(wd) - int(day.Weekday()) + 7) % 7
	if ahead == 0 && !orToday {
		ahead = 7
	}
	return day.AddDate(0, 0, ahead)
}
