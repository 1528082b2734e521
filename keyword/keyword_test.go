package keyword

import (
	"testing"
	"time"
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
