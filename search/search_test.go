package search

import (
	"math"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

func TestFuseRanksAgreementFirst(t *testing.T) {
	t.Parallel()
	text := []imprint.Hit{{Kind: imprint.KindMemory, ID: "a"}, {Kind: imprint.KindMemory, ID: "b"}, {Kind: imprint.KindMemory, ID: "c"}}
	vec := []imprint.Hit{{Kind: imprint.KindMemory, ID: "c"}, {Kind: imprint.KindMemory, ID: "b"}, {Kind: imprint.KindTrace, ID: "a"}}
	got := Fuse(3, text, vec)
	// With k = 60 a hit at 1-based rank r adds 1/(60+r):
	//   memory c: 1/63 (text, 3rd) + 1/61 (vec, 1st) ≈ 0.0322664
	//   memory b: 1/62 + 1/62 (2nd in both)          ≈ 0.0322581
	//   memory a: 1/61 (text only)                   ≈ 0.0163934
	//   trace a:  1/63 (vec only, 3rd)               ≈ 0.0158730, cut by the limit
	// Both hits found twice outrank the ones found once; c edges out b
	// because 1/x is convex (ranks 1 and 3 beat rank 2 twice). The exact
	// scores pin k: any other k gives other scores.
	want := []struct {
		kind  imprint.Kind
		id    string
		score float64
	}{
		{imprint.KindMemory, "c", 1.0/61 + 1.0/63},
		{imprint.KindMemory, "b", 1.0/62 + 1.0/62},
		{imprint.KindMemory, "a", 1.0 / 61},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d hits, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].ID != w.id {
			t.Fatalf("hit %d is %s %s, want %s %s (all: %+v)", i, got[i].Kind, got[i].ID, w.kind, w.id, got)
		}
		if math.Abs(got[i].Score-w.score) > 1e-12 {
			t.Errorf("hit %d (%s) fused score %v, want %v", i, w.id, got[i].Score, w.score)
		}
	}
}

func TestFuseKeepsKindsApart(t *testing.T) {
	t.Parallel()
	got := Fuse(10, []imprint.Hit{{Kind: imprint.KindMemory, ID: "x"}}, []imprint.Hit{{Kind: imprint.KindMessage, ID: "x"}})
	if len(got) != 2 {
		t.Fatalf("a memory and a message with the same id must both be returned, got %+v", got)
	}
}
