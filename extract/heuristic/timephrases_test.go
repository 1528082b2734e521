package heuristic

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
)

// Letters whose lowercase has another byte length ("Ⱥ" 2→3, "İ" 2→1)
// neither crash the date writing nor break the memory's UTF-8, and a time
// expression opening with a non-ASCII letter is capitalized whole.
func TestHeuristicBetweenPeopleDatesNonASCII(t *testing.T) {
	t.Parallel()
	ts := imprint.At(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC))
	tests := []struct {
		in, want string
	}{
		{"I went to " + strings.Repeat("Ⱥ", 8) + " yesterday.", "Ana went to " + strings.Repeat("Ⱥ", 8) + " on 7 May 2023."},
		{"I went to " + strings.Repeat("İ", 8) + " yesterday.", "Ana went to " + strings.Repeat("İ", 8) + " on 7 May 2023."},
		{"Yesterday I went to " + strings.Repeat("Ⱥ", 8) + ".", "On 7 May 2023 Ana went to " + strings.Repeat("Ⱥ", 8) + "."},
		// Time phrases are matched in ASCII only: "ſix" (U+017F) is no
		// "six", and the text stays valid UTF-8.
		{"Xſix days ago it rained, and I got a puppy.", "Ana got a puppy (said on 8 May 2023)."},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got := ExtractBetweenPeople([]imprint.Message{{ID: "m1", Role: imprint.RoleUser, Speaker: "Ana", Content: tc.in, Timestamp: ts}})
			if len(got) != 1 {
				t.Fatalf("ExtractBetweenPeople(%q) = %d memories, want 1: %+v", tc.in, len(got), got)
			}
			if got[0].Content != tc.want {
				t.Errorf("ExtractBetweenPeople(%q) = %q, want %q", tc.in, got[0].Content, tc.want)
			}
			if !utf8.ValidString(got[0].Content) {
				t.Errorf("ExtractBetweenPeople(%q) = %q: not UTF-8", tc.in, got[0].Content)
			}
		})
	}
}
