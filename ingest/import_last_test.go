package ingest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/imprint-dev/imprint/importer"
)

// TestLastBySession: each session maps to its last transcript in the
// source, so extraction gets a session once, after all of it is recorded.
func TestLastBySession(t *testing.T) {
	t.Parallel()
	trs := func(sids ...string) []importer.Transcript {
		out := make([]importer.Transcript, len(sids))
		for i, s := range sids {
			out[i].SessionID = s
		}
		return out
	}
	for _, tt := range []struct {
		name string
		in   []importer.Transcript
		want map[string]int
	}{
		{"none", nil, map[string]int{}},
		{"one each", trs("a", "b"), map[string]int{"a": 0, "b": 1}},
		{"interleaved", trs("a", "b", "a", "c", "b", "a"), map[string]int{"a": 5, "b": 4, "c": 3}},
	} {
		if diff := cmp.Diff(tt.want, lastBySession(tt.in)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
