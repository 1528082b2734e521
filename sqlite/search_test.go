package sqlite

import (
	"fmt"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestSearchTextWidensWindow checks that records ranked below many better
// matches of another scope are still found: the FTS candidate window must
// widen until the scope's own matches appear.
func TestSearchTextWidensWindow(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	defer db.Close()
	ctx := t.Context()
	mine := imprint.Scope{Tenant: "t", User: "u", Agent: "mine"}
	theirs := imprint.Scope{Tenant: "t", User: "u", Agent: "theirs"}
	long := strings.Repeat("filler words about nothing in particular ", 20)
	for i := range 400 {
		m := imprint.Memory{ID: fmt.Sprintf("theirs-%d", i), Content: "airport lounge", Type: imprint.MemoryEpisodic, Scope: theirs}
		if err := db.PutMemory(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		m := imprint.Memory{ID: fmt.Sprintf("mine-%d", i), Content: long + "airport", Type: imprint.MemoryEpisodic, Scope: mine}
		if err := db.PutMemory(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := db.SearchText(ctx, imprint.TextQuery{Scope: mine, Kind: imprint.KindMemory, Text: "airport", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 {
		t.Errorf("found %d of my 3 memories behind 400 better matches of another scope", len(hits))
	}
}
