package sqlite

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	imprint "github.com/imprint-dev/imprint"
)

func TestCountTermMatches(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	defer db.Close()
	ctx := t.Context()
	a := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	b := imprint.Scope{Tenant: "t", User: "u", Agent: "b"}
	texts := []string{"booked a flight to Lisbon", "books flights often", "用户喜欢北京烤鸭", "flight delayed"}
	for i, text := range texts {
		scope := a
		if i == 3 {
			scope = b
		}
		m := imprint.Memory{ID: fmt.Sprintf("m%d", i), Content: text, Type: imprint.MemoryEpisodic, Scope: scope}
		if err := db.PutMemory(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.CountTermMatches(ctx, imprint.KindMemory, []string{"flight", "book", "lisbon", "北京", "北京烤鸭", "porto", `"`, "a"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	// Stemmed, over every scope; CJK bigrams and runs; no token counts 0.
	if want := []int{3, 2, 1, 1, 1, 0, 0, 0}; !cmp.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
	capped, err := db.CountTermMatches(ctx, imprint.KindMemory, []string{"flight"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if capped[0] != 2 {
		t.Errorf("count capped at 2 = %d", capped[0])
	}
	if _, err := db.CountTermMatches(ctx, "thing", []string{"x"}, 2); err == nil {
		t.Error("unknown kind accepted")
	}
}
