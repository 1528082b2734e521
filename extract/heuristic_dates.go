package extract

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/imprint-dev/imprint/keyword"
)

// enCommonOpeners are capitalized words that open a clause only because
// they open the sentence; anything else capitalized (a name) stays so.
var enCommonOpeners = wordSet(`the a an this that these those it its they their there he she his her we our my some
	all both each every one two many most no not so then when while after before since`)

// dateLayout writes a date in memories of conversations between people
// ("8 May 2023").
const dateLayout = "2 January 2006"

// datedEN writes the date into the clause of an episodic memory said at
// ts in a conversation between people, so that the memory stands on its
// own: the relative time expression expr (as found in the sentence, "" for
// none) is replaced by an absolute one ("yesterday" → "on 7 May 2023",
// "last week" → "in the week before 8 May 2023"), put in front when the
// clause does not hold it; without one that can be written out, the day it
// was said is added ("… (said on 8 May 2023)"). future says whether the
// clause is a plan (see keyword.RelativeDay).
func datedEN(clause, expr string, ts time.Time, future bool) string {
	// A clause opening with a name ("Caroline went …") keeps its capital.
	open := lowerFirst
	if r, _ := utf8.DecodeRuneInString(clause); unicode.IsUpper(r) && !enCommonOpeners[strings.ToLower(firstWord(clause))] {
		open = func(s string) string { return s }
	}
	if ts.IsZero() {
		return clause
	}
	said := ts.UTC().Format(dateLayout)
	adverbial, noun, ok := absoluteTimeEN(strings.ToLower(expr), ts, future)
	if !ok {
		return strings.TrimRight(clause, " ,;:-–—") + " (said on " + said + ")"
	}
	// Folded by ASCII only, so that a byte position in the folded clause is
	// one in clause: strings.ToLower changes the byte length of some letters
	// ("Ⱥ", "İ"). expr is a piece of the sentence whose case the clause may
	// change only in ASCII letters.
	at := strings.Index(asciiLower(clause), asciiLower(expr))
	if at < 0 {
		return upperFirst(adverbial) + ", " + open(clause)
	}
	before, after := clause[:at], clause[at+len(expr):]
	phrase := adverbial
	if nounUse(before, after) {
		phrase = noun
	}
	if strings.TrimSpace(before) == "" {
		phrase = upperFirst(phrase)
	}
	return before + phrase + after
}

// nounUse reports whether a time expression between before and after is
// used as a noun ("because tomorrow is …", "since last week") rather than
// as an adverb ("I went there yesterday").
func nounUse(before, after string) bool {
	b := strings.Fields(strings.ToLower(before))
	if len(b) > 0 {
		switch b[len(b)-1] {
		case "since", "until", "till", "from", "of", "for", "than", "about", "by", "before", "after", "like", "and":
			return true
		}
	}
	if strings.HasPrefix(after, "'s") {
		return true
	}
	switch firstWord(after) {
	case "is", "was", "will", "would", "seems", "seemed", "feels", "felt", "has", "had":
		return true
	}
	return false
}

// absoluteTimeEN returns the adverbial ("on 7 May 2023") and noun ("7 May
// 2023") forms of a lowercased relative time expression said at ts; false
// for none or one that names no time ("recently", "the other day").
func absoluteTimeEN(expr string, ts time.Time, future bool) (adverbial, noun string, ok bool) {
	if expr == "" {
		return "", "", false
	}
	day := time.Date(ts.UTC().Year(), ts.UTC().Month(), ts.UTC().Day(), 0, 0, 0, 0, time.UTC)
	said := day.Format(dateLayout)
	month := func(n int) string { return day.AddDate(0, n, 1-day.Day()).Format("January 2006") }
	year := func(n int) string { return strconv.Itoa(day.Year() + n) }
	switch expr {
	case "last week":
		return "in the week before " + said, "the week before " + said, true
	case "this week":
		return "in the week of " + said, "the week of " + said, true
	case "next week":
		return "in the week after " + said, "the week after " + said, true
	case "last month":
		return "in " + month(-1), month(-1), true
	case "this month":
		return "in " + month(0), month(0), true
	case "next month":
		return "in " + month(1), month(1), true
	case "last year":
		return "in " + year(-1), year(-1), true
	case "this year":
		return "in " + year(0), year(0), true
	case "next year":
		return "in " + year(1), year(1), true
	case "recently", "lately", "the other day":
		return "", "", false
	case "last night", "tonight":
		d, _ := keyword.RelativeDay(expr, ts, future)
		return "on the night of " + d.Format(dateLayout), "the night of " + d.Format(dateLayout), true
	case "last weekend", "this weekend", "next weekend":
		d, _ := keyword.RelativeDay(expr, ts, future)
		return "on the weekend of " + d.Format(dateLayout), "the weekend of " + d.Format(dateLayout), true
	}
	if d, ok := keyword.RelativeDay(expr, ts, future); ok && !strings.Contains(expr, "week") {
		return "on " + d.Format(dateLayout), d.Format(dateLayout), true
	}
	// "two weeks ago", "a few months ago", "in two weeks".
	if n, ok := strings.CutSuffix(expr, " ago"); ok {
		return n + " before " + said, n + " before " + said, true
	}
	if n, ok := strings.CutPrefix(expr, "in "); ok {
		return n + " after " + said, n + " after " + said, true
	}
	return "", "", false
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// asciiLower returns s with its ASCII capitals lowercased and every other
// byte kept, so that it has the same length and byte positions as s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
