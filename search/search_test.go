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
	if len(got) != 3 {
		t.Fatalf("got %d hits, want 3", len(got))
	}
	// b is 2nd in both lists: 2/(62) beats a (1/61 only) and c (1/63+1/61).
	if got[0].ID != "b" && got[0].ID != "c" {
		t.Fatalf("first hit %s, want one found by both lists", got[0].ID)
	}
	for _, h := range got {
		if h.Kind == imprint.KindTrace {
			t.Fatalf("trace a (in one list, rank 3) outranked memories found twice: %+v", got)
		}
	}
	want := 1.0/62 + 1.0/62
	if got[0].ID == "b" && math.Abs(got[0].Score-want) > 1e-12 {
		t.Fatalf("score %v, want %v", got[0].Score, want)
	}
}

func TestFuseKeepsKindsApart(t *testing.T) {
	t.Parallel()
	got := Fuse(10, []imprint.Hit{{Kind: imprint.KindMemory, ID: "x"}}, []imprint.Hit{{Kind: imprint.KindMessage, ID: "x"}})
	if len(got) != 2 {
		t.Fatalf("a memory and a message with the same id must both be returned, got %+v", got)
	}
}

func TestParseKind(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "all", "memory", "trace", "message"} {
		if _, err := ParseKind(s); err != nil {
			t.Errorf("ParseKind(%q): %v", s, err)
		}
	}
	if _, err := ParseKind("facts"); err == nil {
		t.Error("ParseKind(facts) should fail")
	}
}
