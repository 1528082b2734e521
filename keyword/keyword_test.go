package keyword

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/testfiles"
)

func TestDateTerms(t *testing.T) {
	t.Parallel()
	may8 := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC) // a Monday
	const own = "8 May 2023 Monday"
	for _, tc := range []struct {
		text, want string
	}{
		{"Hi!", own},
		{"I went to a support group yesterday.", own + " 7 May 2023 Sunday"},
		{"The day before yesterday we moved.", own + " 6 May 2023 Saturday"},
		{"See you tomorrow", own + " 9 May 2023 Tuesday"},
		{"Last night was fun; today too.", own + " 7 May 2023 Sunday"},
		{"We went camping last week.", own + " 1 May 2023 Monday"},
		{"Next week I fly.", own + " 15 May 2023 Monday"},
		{"Last weekend I ran a charity race.", own + " 6 May 2023 Saturday 7 May 2023 Sunday"},
		{"I painted a sunrise last year.", own + " 2022"},
		{"Last month my mom visited.", own + " April 2023"},
		{"Two weeks ago I adopted a dog.", own + " 24 April 2023 Monday"},
		{"3 days ago", own + " 5 May 2023 Friday"},
		{"a couple of days ago", own + " 6 May 2023 Saturday"},
		{"a few months ago I started", own + " February 2023"},
		{"ten years ago", own + " 2013"},
		{"Last Friday I read a book.", own + " 5 May 2023 Friday"},
		{"last Monday", own + " 1 May 2023 Monday"},
		{"next Monday", own + " 15 May 2023 Monday"},
		{"this Friday", own + " 5 May 2023 Friday"}, // a report, as extraction reads it
		{"Last weekend", own + " 6 May 2023 Saturday 7 May 2023 Sunday"},
		{"yesterday and yesterday", own + " 7 May 2023 Sunday"},
		{"the last one", own},
		{"ago", own},
		{"many days ago", own},
	} {
		if got := DateTerms(may8, tc.text); got != tc.want {
			t.Errorf("DateTerms(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	if got := DateTerms(time.Time{}, "yesterday"); got != "" {
		t.Errorf("zero time: %q", got)
	}
	// "last weekend" said on a Sunday is the weekend before, as extraction
	// reads it (RelativeDay).
	if got := DateTerms(time.Date(2023, 5, 7, 12, 0, 0, 0, time.UTC), "last weekend"); got != "7 May 2023 Sunday 29 April 2023 Saturday 30 April 2023 Sunday" {
		t.Errorf("last weekend on a Sunday = %q", got)
	}
	// Month arithmetic from the 31st stays in the month named.
	if got := DateTerms(time.Date(2023, 3, 31, 0, 0, 0, 0, time.UTC), "last month"); got != "31 March 2023 Friday February 2023" {
		t.Errorf("last month from 31 March = %q", got)
	}
}

func TestIsStopWord(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"the", "did", "when", "what", "she", "to"} {
		if !IsStopWord(w) {
			t.Errorf("%q is a stop word", w)
		}
	}
	for _, w := range []string{"may", "caroline", "go", "support", "北京", "The"} {
		if IsStopWord(w) {
			t.Errorf("%q is not a stop word", w)
		}
	}
}

func FuzzDateTerms(f *testing.F) {
	for _, s := range []string{"yesterday", "a couple of days ago", "last weekend", "99999 days ago", "last"} {
		f.Add(s)
	}
	at := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got := DateTerms(at, s)
		if len(got) < len("8 May 2023 Monday") || got[:17] != "8 May 2023 Monday" {
			t.Fatalf("DateTerms(%q) = %q: the own date must come first", s, got)
		}
	})
}

// BenchmarkDateTerms is DateTerms over the LoCoMo turns, the work the
// message index does per recorded message.
func BenchmarkDateTerms(b *testing.B) {
	raw, err := os.ReadFile(testfiles.Path(b, "locomo/locomo-2conv.json"))
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, m := range regexp.MustCompile(`"text": "((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(raw), -1) {
		texts = append(texts, m[1])
	}
	at := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		DateTerms(at, texts[i%len(texts)])
	}
}

// TestTimePhrasesNearTimeWordsFindEveryPhrase: running the pattern only
// around time words finds every phrase naming a date that running it on
// the whole text finds ("today" and "lately" name none), on
// every turn of the repository's conversations and a few hand-made edge
// cases (phrases at a window's end, several in a row).
func TestTimePhrasesNearTimeWordsFindEveryPhrase(t *testing.T) {
	t.Parallel()
	texts := []string{
		"We met last week and two weeks ago, then next month, and on Friday too.",
		"one two three four last five six seven eight next month nine",
		"Yesterday, the day before yesterday and a couple of days ago!",
		"LAST WEEKEND we went; in three days we go; this Saturday maybe.",
	}
	texts = append(texts, conversationTexts(t)...)
	at := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)
	names := func(ps []string) []string { // the phrases that name a date
		var out []string
		for _, p := range ps {
			if d, ok := RelativeDay(p, at, false); ok && !d.Equal(at) || monthOrYear(p, at) != "" {
				out = append(out, p)
			}
		}
		return out
	}
	found := 0
	for _, text := range texts {
		want := names(findTimePhrases(text))
		got := names(timePhrasesNearTimeWords(text))
		if !slices.Equal(got, want) {
			t.Errorf("%q: near time words %q, whole text %q", text, got, want)
		}
		found += len(want)
	}
	if found < 50 {
		t.Errorf("only %d phrases in %d texts: the test shows little", found, len(texts))
	}
}

// TestTimePhraseGateChangesNothing runs every phrase timePhrase knows, in
// sentences and in other cases, and the shared test data through
// FindTimePhrase and findTimePhrases, and through the pattern alone: the
// word check in front of it (mayHaveTimePhrase) may only skip texts the
// pattern finds nothing in.
func TestTimePhraseGateChangesNothing(t *testing.T) {
	t.Parallel()
	weekdays := []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
	var phrases []string
	phrases = append(phrases, "the day before yesterday", "yesterday", "today", "tonight", "tomorrow", "earlier today",
		"later today", "the other day", "recently", "lately", "just now")
	for _, u := range append([]string{"morning", "afternoon", "evening", "week", "weekend", "month", "year"}, weekdays...) {
		phrases = append(phrases, "this "+u)
	}
	for _, u := range append([]string{"night", "week", "weekend", "month", "year"}, weekdays...) {
		phrases = append(phrases, "last "+u)
	}
	for _, u := range append([]string{"week", "weekend", "month", "year"}, weekdays...) {
		phrases = append(phrases, "next "+u)
	}
	for _, d := range weekdays {
		phrases = append(phrases, "on "+d)
	}
	for _, n := range []string{"a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "12", "a few", "few", "a couple of", "couple of", "a couple"} {
		for _, u := range []string{"day", "days", "week", "weeks", "weekend", "weekends", "month", "months", "year", "years"} {
			phrases = append(phrases, n+" "+u+" ago")
		}
	}
	for _, n := range []string{"a", "one", "two", "three", "four", "five", "3", "a few", "a couple of"} {
		for _, u := range []string{"day", "days", "week", "weeks"} {
			phrases = append(phrases, "in "+n+" "+u)
		}
	}
	var texts []string
	for _, p := range phrases {
		texts = append(texts, p, strings.ToUpper(p), "I went there "+p+", and then home.", "("+p+")", "x"+p, p+"s", "Ok:"+strings.ToUpper(p[:1])+p[1:]+"!")
	}
	texts = append(texts, conversationTexts(t)...)
	found, skipped := 0, 0
	for _, text := range texts {
		lower := asciiLower(text)
		want := timePhrase.FindAllString(lower, -1)
		if got := findTimePhrases(text); !slices.Equal(got, want) {
			t.Errorf("%q: findTimePhrases %q, the pattern alone %q", text, got, want)
		}
		first := ""
		if loc := timePhrase.FindStringIndex(lower); loc != nil {
			first = text[loc[0]:loc[1]]
		}
		if got := FindTimePhrase(text); got != first {
			t.Errorf("%q: FindTimePhrase %q, the pattern alone %q", text, got, first)
		}
		if len(want) > 0 {
			found++
		}
		if !mayHaveTimePhrase(text) {
			skipped++
		}
	}
	if found < 500 || skipped < 500 {
		t.Errorf("%d texts with a phrase, %d skipped: the test shows little", found, skipped)
	}
}

// conversationTexts returns the turns of the repository's LoCoMo and
// τ-bench conversations, as their JSON writes them.
func conversationTexts(t *testing.T) []string {
	t.Helper()
	var texts []string
	for _, f := range []string{"locomo/locomo-2conv.json", "tau-bench/airline-40.json"} {
		raw, err := os.ReadFile(testfiles.Path(t, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(?:text|content)": "((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(raw), -1) {
			texts = append(texts, m[1])
		}
	}
	return texts
}
