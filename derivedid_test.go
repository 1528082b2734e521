package imprint

import "testing"

// TestDerivedIDsKeepTheirValues: each way of deriving an id gives the ids
// stored by earlier versions (the trace id capture has always given), the
// kind is part of the input, and time-ordered ids sort by their time.
func TestDerivedIDsKeepTheirValues(t *testing.T) {
	t.Parallel()
	if got := DerivedID("imprint.trace.v1", "ep:1", "step/0"); got != "7801190c-88ae-8541-b19e-7cfda15d985d" {
		t.Errorf("DerivedID = %s, want the trace id of earlier versions", got)
	}
	if a, b := DerivedID("imprint.trace.v1", "e"), DerivedID("imprint.episode.v1", "e"); a == b {
		t.Errorf("two kinds share the id %s", a)
	}
	if a, b := DerivedID("k", "a\x1f", "b"), DerivedID("k", "a", "\x1fb"); a == b {
		t.Errorf("look-alike parts share the id %s", a)
	}
	if a, b := LengthPrefixedID("ab", "c"), LengthPrefixedID("a", "bc"); a == b {
		t.Errorf("length-prefixed look-alike parts share the id %s", a)
	}
	early, late := TimeOrderedID(1_700_000_000_000, "z", 0), TimeOrderedID(1_700_000_000_001, "a", 0)
	if early >= late {
		t.Errorf("TimeOrderedID(earlier) = %s sorts after TimeOrderedID(later) = %s", early, late)
	}
	for _, id := range []string{early, DerivedID("k"), LengthPrefixedID("k")} {
		if id[14] != '8' {
			t.Errorf("%s is not a version-8 UUID", id)
		}
	}
	if a, b := TimeOrderedID(0, "k", 0), TimeOrderedID(0, "k", 1); a == b {
		t.Errorf("ranks 0 and 1 share the id %s", a)
	}
}
