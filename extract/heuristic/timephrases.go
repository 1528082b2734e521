package heuristic

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

var zhDigits = map[rune]int{'一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9, '十': 10}
var zhWeekdays = map[rune]time.Weekday{'一': time.Monday, '二': time.Tuesday, '三': time.Wednesday, '四': time.Thursday,
	'五': time.Friday, '六': time.Saturday, '日': time.Sunday, '天': time.Sunday}

// relativeDayZH is keyword.RelativeDay for Chinese time words.
func relativeDayZH(expr string, ts time.Time) (time.Time, bool) {
	if ts.IsZero() {
		return time.Time{}, false
	}
	day := time.Date(ts.UTC().Year(), ts.UTC().Month(), ts.UTC().Day(), 0, 0, 0, 0, time.UTC)
	switch expr {
	case "今天", "今晚", "今早", "今日", "刚才", "刚刚":
		return day, true
	case "昨天", "昨晚", "昨日":
		return day.AddDate(0, 0, -1), true
	case "前天":
		return day.AddDate(0, 0, -2), true
	case "大前天":
		return day.AddDate(0, 0, -3), true
	case "明天", "明晚":
		return day.AddDate(0, 0, 1), true
	case "后天":
		return day.AddDate(0, 0, 2), true
	case "上周", "上星期":
		return day.AddDate(0, 0, -7), true
	case "下周", "下星期":
		return day.AddDate(0, 0, 7), true
	}
	monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	switch expr {
	case "上周末":
		return monday.AddDate(0, 0, -2), true
	case "这周末", "周末":
		return monday.AddDate(0, 0, 5), true
	case "下周末":
		return monday.AddDate(0, 0, 12), true
	}
	rs := []rune(expr)
	if strings.HasSuffix(expr, "天前") || strings.HasSuffix(expr, "天后") {
		n := 0
		for _, r := range rs[:len(rs)-2] {
			switch {
			case r >= '0' && r <= '9':
				n = n*10 + int(r-'0')
			case r == '十':
				if n == 0 {
					n = 10
				} else {
					n *= 10
				}
			default:
				n += zhDigits[r]
			}
			if n > 10000 {
				return time.Time{}, false
			}
		}
		if strings.HasSuffix(expr, "天前") {
			n = -n
		}
		return day.AddDate(0, 0, n), true
	}
	if len(rs) >= 2 {
		wd, ok := zhWeekdays[rs[len(rs)-1]]
		if !ok {
			return time.Time{}, false
		}
		offset := (int(wd) + 6) % 7 // days after Monday
		switch {
		case strings.HasPrefix(expr, "上"):
			return monday.AddDate(0, 0, offset-7), true
		case strings.HasPrefix(expr, "下"):
			return monday.AddDate(0, 0, offset+7), true
		default: // 周五, 这周五, 本周五, 星期五: this week's
			return monday.AddDate(0, 0, offset), true
		}
	}
	return time.Time{}, false
}
