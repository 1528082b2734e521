package storetest

import (
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// testTotals checks the store's totals over every scope: live memories by
// type (a superseded version and a forgotten memory are not counted), traces, messages and
// sessions, each the sum of what every scope holds.
func testTotals(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	empty, err := s.Totals(ctx)
	must(t, err)
	if d := diff(imprint.Totals{Memories: map[imprint.MemoryType]int{}}, empty); d != "" {
		t.Errorf("totals of an empty store (-want +got):\n%s", d)
	}
	appendMsgs(t, s, scopeA, "s1", msg("u1", imprint.RoleUser, "hello", 0), msg("a1", imprint.RoleAssistant, "hi", 1))
	appendMsgs(t, s, scopeB, "s1", msg("u1", imprint.RoleUser, "hello from b", 0))
	appendMsgs(t, s, scopeC, "s9", msg("u1", imprint.RoleUser, "hello from c", 0))
	must(t, s.SaveCapture(ctx, episode("ep1", scopeA), steps(2, "a")))
	must(t, s.SaveCapture(ctx, episode("ep2", scopeC), steps(1, "c")))
	p1 := memory("p1", "User prefers window seats", 0)
	p2 := memory("p2", "User prefers aisle seats", 5)
	p2.Version, p2.Supersedes = 2, []string{"p1"}
	ins := memory("i1", "Always answer in British English", 1)
	ins.Type = imprint.MemoryInstruction
	other := memory("c1", "User lives in Porto", 2)
	other.Scope, other.Type = scopeC, imprint.MemoryEpisodic
	must(t, s.PutMemory(ctx, p1, nil))
	must(t, s.PutMemory(ctx, p2, []string{"p1"}))
	must(t, s.PutMemory(ctx, ins, nil))
	must(t, s.PutMemory(ctx, other, nil))
	gone := memory("f1", "User likes jazz", 3)
	gone.ContentHash = "hash-f1-gone"
	must(t, s.PutMemory(ctx, gone, nil))
	_, err = s.RetireMemory(ctx, scopeA, "f1", at(4).Time)
	must(t, err)
	got, err := s.Totals(ctx)
	must(t, err)
	want := imprint.Totals{
		Memories: map[imprint.MemoryType]int{imprint.MemoryPersona: 1, imprint.MemoryInstruction: 1, imprint.MemoryEpisodic: 1},
		Traces:   3, Messages: 4, Sessions: 3,
	}
	if d := diff(want, got); d != "" {
		t.Errorf("totals (-want +got):\n%s", d)
	}
}
