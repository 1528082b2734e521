package extract

import (
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestMemoryIDsOfPlainAndLookAlikeParts: memories keep the ids earlier
// versions derived (a window run again logs the same memory, not a new
// one), and memories whose parts only look alike when joined get
// distinct ids, as do the marker names of look-alike sessions.
func TestMemoryIDsOfPlainAndLookAlikeParts(t *testing.T) {
	ts, err := imprint.ParseTime("2026-01-02T03:04:05Z")
	if err != nil {
		t.Fatal(err)
	}
	sc := imprint.Scope{Tenant: "t", User: "u", Agent: "ag:d"}
	w := Window{Consumed: []imprint.Message{{ID: "m1", Seq: 7, Timestamp: ts, Content: "x"}}}
	mem := func(content string, src ...string) imprint.Memory {
		return imprint.Memory{Type: imprint.MemoryType("fact"), Content: content, SourceMessageIDs: src}
	}
	mems := []imprint.Memory{mem("50% off: a/b", "m2", "m1"), mem("50% off: a/b", "m2", "m1")}
	assignIDs(sc, "a:b", w, mems)
	if mems[0].ID != "019b7ca9-8c88-8ae3-b350-e280c52a46cf" || mems[1].ID != "019b7ca9-8c88-8a4d-8371-1a4cc173637f" {
		t.Errorf("memory ids = %s, %s; want the ids of earlier versions", mems[0].ID, mems[1].ID)
	}
	if got := sessionKey(sc, "a:b"); got != "0874077df8e917632200431a214b3b4c" {
		t.Errorf("sessionKey = %s, want the marker name of earlier versions", got)
	}

	// A NUL in a memory's content used to read as the end of the content
	// and the start of a source id.
	// (Each is the first of its window: identical ones in one window
	// differ by rank.)
	a, b := []imprint.Memory{mem("c\x00m1")}, []imprint.Memory{mem("c", "m1")}
	assignIDs(sc, "s", w, a)
	assignIDs(sc, "s", w, b)
	if a[0].ID == b[0].ID {
		t.Errorf("memories %q (no source) and %q (source m1) share the id %s", a[0].Content, b[0].Content, a[0].ID)
	}
	if a, b := sessionKey(imprint.Scope{Tenant: "t", User: "u", Agent: "x\x00s"}, ""),
		sessionKey(imprint.Scope{Tenant: "t", User: "u", Agent: "x"}, "s\x00"); a == b {
		t.Errorf("two sessions share the marker name %s", a)
	}
}
