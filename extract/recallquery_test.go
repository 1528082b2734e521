package extract

import (
	"context"
	imprint "github.com/imprint-dev/imprint"
	"strings"
	"testing"
)

func TestRecallQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, want string
	}{
		{"stop words dropped", "The user is allergic to peanuts and carries an EpiPen.", "allergic peanuts carries epipen"},
		{"short words dropped", "I go to LA by car", "car"},
		{"only common words kept as is", "I like it.", "I like it."},
		{"longest eight in order", "Melanie painted a sunrise over the lake last summer with her kids and her husband Martin",
			"melanie painted sunrise lake last summer husband martin"},
		{"repeats once", "Berlin, Berlin and Berlin again", "berlin"},
		{"chinese split at function chars", "我住在北京", "北京"},
		{"chinese bigrams", "用户喜欢喝绿茶", "用户 户喜 喜欢 欢喝 喝绿 绿茶"},
		{"quotes never survive", `say "OR" NEAR(x) *`, "near"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := recallQuery(tt.content, nil); got != tt.want {
				t.Errorf("recallQuery(%q) = %q, want %q", tt.content, got, tt.want)
			}
		})
	}
}

func TestRecallQueryBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("alpha bravo charlie delta echoes foxtrot golfing hotel indiana juliet kilos limas ", 20) +
		"extraordinarily"
	got := strings.Fields(recallQuery(long, nil))
	if len(got) != recallTerms {
		t.Fatalf("recallQuery kept %d terms (%v), want %d", len(got), got, recallTerms)
	}
	if got[len(got)-1] != "extraordinarily" {
		t.Errorf("the longest word was not kept: %v", got)
	}
}

func TestRecallQueryPrefersRareTerms(t *testing.T) {
	t.Parallel()
	counts := map[string]int{"reservation": recallCommon, "flight": recallCommon, "cancel": 40, "basic": 3, "economy": 900, "oscar": 0}
	count := func(terms []string) []int {
		out := make([]int, len(terms))
		for i, term := range terms {
			out[i] = counts[term]
		}
		return out
	}
	tests := []struct {
		name, content, want string
	}{
		{"rarest within the budget", "Cancel the reservation of the basic economy flight", "cancel reservation basic economy"},
		{"terms matching nothing dropped", "The reservation flight for Oscar", "reservation flight"},
		{"all matching nothing kept", "Oscar and Zulu", "oscar zulu"},
		{"rarest kept even if common", "Reservation", "reservation"},
		{"no counts falls back to length", "Cancel the reservation of the basic economy flight", "cancel reservation basic economy flight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := count
			if strings.HasPrefix(tt.name, "no counts") {
				c = func([]string) []int { return nil }
			}
			if got := recallQuery(tt.content, c); got != tt.want {
				t.Errorf("recallQuery(%q) = %q, want %q", tt.content, got, tt.want)
			}
		})
	}
}

func TestRecallTextUsesStoreCounts(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, smallConfig(10, 5))
	e.putMemory("User books a flight to Lisbon in April.", imprint.MemoryPersona)
	e.putMemory("User books a flight to Porto in May.", imprint.MemoryPersona)
	// "conference" is in no memory; "booked" matches "books" (stemmed).
	got := recallText(e.ctx, e.store, e.scope, "User booked a flight to Lisbon for the conference in April.")
	if got != "booked flight lisbon april" {
		t.Errorf("recallText = %q", got)
	}
}

// SupportsTermCounts and CountTermMatches forward to the real store, so
// the keyword tier of every test runs with term counts as it does on
// sqlite.
func (s *spyStore) SupportsTermCounts() bool {
	_, ok := imprint.AsTermCounter(s.Store)
	return ok
}

// CountTermMatches forwards to the real store (see SupportsTermCounts).
func (s *spyStore) CountTermMatches(ctx context.Context, scope imprint.Scope, kind imprint.Kind, terms []string, limit int) ([]int, error) {
	tc, _ := imprint.AsTermCounter(s.Store)
	return tc.CountTermMatches(ctx, scope, kind, terms, limit)
}
