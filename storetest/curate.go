package storetest

import (
	"fmt"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// testRetireMemory: a forgotten memory is out of every live read (list,
// keyword and vector search, the hash lookups, the count) and still read by
// id and in its successor's history.
func testRetireMemory(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	keep := memory("keep", "User likes green tea in Kyoto", 0)
	gone := memory("gone", "User likes oolong tea in Taipei", 1)
	keep.Vec, keep.Embedder = []float32{1, 0}, "e/2"
	gone.Vec, gone.Embedder = []float32{0.9, 0.1}, "e/2"
	must(t, s.PutMemory(ctx, keep, nil))
	must(t, s.PutMemory(ctx, gone, nil))
	when := at(30).Time

	got, err := s.RetireMemory(ctx, scopeA, "gone", when)
	must(t, err)
	if got.ForgottenAt == nil || !got.ForgottenAt.Equal(imprint.At(when).Time) {
		t.Fatalf("RetireMemory: ForgottenAt = %v, want %v", got.ForgottenAt, when)
	}
	read, err := s.GetMemory(ctx, scopeA, "gone")
	must(t, err)
	if read.ForgottenAt == nil || read.Content != gone.Content {
		t.Errorf("GetMemory of a forgotten memory = %+v, want it with ForgottenAt", read)
	}
	again, err := s.RetireMemory(ctx, scopeA, "gone", at(60).Time)
	must(t, err)
	if !again.ForgottenAt.Equal(imprint.At(when).Time) {
		t.Errorf("retiring again moved ForgottenAt to %v", again.ForgottenAt)
	}

	live, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{})
	must(t, err)
	if d := diff([]string{"keep"}, memIDs(live)); d != "" {
		t.Errorf("ListMemories after forget (-want +got):\n%s", d)
	}
	all, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{AllVersions: true})
	must(t, err)
	if d := diff([]string{"gone", "keep"}, memIDs(all)); d != "" {
		t.Errorf("ListMemories all versions (-want +got):\n%s", d)
	}
	hits, err := s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMemory, Text: "tea"})
	must(t, err)
	if d := diff([]string{"keep"}, hitIDs(hits)); d != "" {
		t.Errorf("SearchText after forget (-want +got):\n%s", d)
	}
	vhits, err := s.SearchVector(ctx, imprint.VectorQuery{Scope: scopeA, Kind: imprint.KindMemory, Vector: []float32{0.9, 0.1}, Embedder: "e/2", Limit: 5})
	must(t, err)
	if d := diff([]string{"keep"}, hitIDs(vhits)); d != "" {
		t.Errorf("SearchVector after forget (-want +got):\n%s", d)
	}
	byHash, err := s.FindMemoryByHash(ctx, scopeA, gone.ContentHash)
	must(t, err)
	if len(byHash) != 0 {
		t.Errorf("FindMemoryByHash found the forgotten memory: %v", memIDs(byHash))
	}
	has, err := s.HasLiveMemoryHash(ctx, scopeA, gone.ContentHash)
	must(t, err)
	if has {
		t.Errorf("HasLiveMemoryHash = true for a forgotten memory")
	}
	n, err := s.CountMemories(ctx, scopeA)
	must(t, err)
	if n != 1 {
		t.Errorf("CountMemories = %d, want 1", n)
	}

	// Superseded: forget the live version instead. Another scope: not found.
	v2 := memory("keep2", "User likes green tea in Uji", 5)
	v2.Version, v2.Supersedes = 2, []string{"keep"}
	must(t, s.PutMemory(ctx, v2, []string{"keep"}))
	_, err = s.RetireMemory(ctx, scopeA, "keep", when)
	wantErr(t, "RetireMemory of a superseded memory", err, imprint.ErrConflict)
	_, err = s.RetireMemory(ctx, scopeB, "keep2", when)
	wantErr(t, "RetireMemory from another scope", err, imprint.ErrNotFound)
	_, err = s.RetireMemory(ctx, scopeA, "missing", when)
	wantErr(t, "RetireMemory of an unknown id", err, imprint.ErrNotFound)
	_, err = s.RetireMemory(ctx, imprint.Scope{}, "keep2", when)
	wantErr(t, "RetireMemory without scope", err, imprint.ErrInvalid)
	must(t, firstErr(s.RetireMemory(ctx, scopeA, "keep2", when)))
	hist, err := s.MemoryHistory(ctx, scopeA, "keep2")
	must(t, err)
	if d := diff([]string{"keep"}, memIDs(hist)); d != "" {
		t.Errorf("MemoryHistory of a forgotten memory (-want +got):\n%s", d)
	}
}

// testForgottenRoundTrip: a memory put with ForgottenAt (a restore or a
// rebuild) is stored forgotten.
func testForgottenRoundTrip(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	m := memory("f1", "User once lived in Oslo", 0)
	stamp := at(9)
	m.ForgottenAt = &stamp
	must(t, s.PutMemory(ctx, m, nil))
	got, err := s.GetMemory(ctx, scopeA, "f1")
	must(t, err)
	if d := diff(m, got); d != "" {
		t.Errorf("GetMemory (-want +got):\n%s", d)
	}
	hits, err := s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMemory, Text: "Oslo"})
	must(t, err)
	if len(hits) != 0 {
		t.Errorf("a memory stored forgotten is searched: %v", hitIDs(hits))
	}
}

// testPurgeMemories: purged memories are gone from every read; other
// scopes' ids are ignored.
func testPurgeMemories(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	a := memory("p1", "User is allergic to peanuts", 0)
	a.Vec, a.Embedder = []float32{1, 0}, "e/2"
	b := memory("p2", "User is allergic to peanuts and shellfish", 1)
	b.Version, b.Supersedes = 2, []string{"p1"}
	b.Vec, b.Embedder = []float32{1, 0}, "e/2"
	other := memory("p3", "User is allergic to peanuts too", 2)
	other.Scope = scopeB
	must(t, s.PutMemory(ctx, a, nil))
	must(t, s.PutMemory(ctx, b, []string{"p1"}))
	must(t, s.PutMemory(ctx, other, nil))

	got, err := s.PurgeMemories(ctx, scopeA, []string{"p2", "p1", "p3", "missing"})
	must(t, err)
	if d := diff([]string{"p2", "p1"}, got); d != "" {
		t.Errorf("PurgeMemories (-want +got):\n%s", d)
	}
	for _, id := range []string{"p1", "p2"} {
		_, err := s.GetMemory(ctx, scopeA, id)
		wantErr(t, "GetMemory of purged "+id, err, imprint.ErrNotFound)
	}
	all, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{AllVersions: true})
	must(t, err)
	if len(all) != 0 {
		t.Errorf("ListMemories after purge = %v", memIDs(all))
	}
	hits, err := s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMemory, Text: "peanuts"})
	must(t, err)
	if len(hits) != 0 {
		t.Errorf("SearchText after purge = %v", hitIDs(hits))
	}
	vhits, err := s.SearchVector(ctx, imprint.VectorQuery{Scope: scopeA, Kind: imprint.KindMemory, Vector: []float32{1, 0}, Embedder: "e/2", Limit: 5})
	must(t, err)
	if len(vhits) != 0 {
		t.Errorf("SearchVector after purge = %v", hitIDs(vhits))
	}
	if _, err := s.GetMemory(ctx, scopeB, "p3"); err != nil {
		t.Errorf("another scope's memory was purged: %v", err)
	}
	_, err = s.PurgeMemories(ctx, imprint.Scope{}, []string{"p3"})
	wantErr(t, "PurgeMemories without scope", err, imprint.ErrInvalid)
}

// testPurgeMessages: purged messages are gone from reads and searches; the
// session's other messages stay.
func testPurgeMessages(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	appendMsgs(t, s, scopeA, "s1",
		msg("m1", imprint.RoleUser, "my passport number is in the drawer", 0),
		msg("m2", imprint.RoleAssistant, "noted, the drawer", 1),
		msg("m3", imprint.RoleUser, "thanks", 2))
	must(t, s.SetMessageVectors(ctx, scopeA, "s1", map[string][]float32{"m1": {1, 0}, "m3": {0, 1}}, "e/2"))
	appendMsgs(t, s, scopeB, "s1", msg("m1", imprint.RoleUser, "passport in scope B", 0))

	got, err := s.PurgeMessages(ctx, scopeA, "s1", []string{"m1", "nope"})
	must(t, err)
	if d := diff([]string{"m1"}, got); d != "" {
		t.Errorf("PurgeMessages (-want +got):\n%s", d)
	}
	_, err = s.GetMessage(ctx, scopeA, "s1", "m1")
	wantErr(t, "GetMessage of a purged message", err, imprint.ErrNotFound)
	hits, err := s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMessage, Text: "passport"})
	must(t, err)
	for _, h := range hits {
		if h.ID == "m1" {
			t.Errorf("SearchText finds the purged message")
		}
	}
	vhits, err := s.SearchVector(ctx, imprint.VectorQuery{Scope: scopeA, Kind: imprint.KindMessage, Vector: []float32{1, 0}, Embedder: "e/2", Limit: 5})
	must(t, err)
	for _, h := range vhits {
		if h.ID == "m1" {
			t.Errorf("SearchVector finds the purged message")
		}
	}
	rest, err := s.MessagesBefore(ctx, scopeA, "s1", 1<<62, 10)
	must(t, err)
	if d := diff([]string{"m2", "m3"}, msgIDs(rest)); d != "" {
		t.Errorf("messages left (-want +got):\n%s", d)
	}
	if _, err := s.GetMessage(ctx, scopeB, "s1", "m1"); err != nil {
		t.Errorf("another scope's message was purged: %v", err)
	}
}

// testListNoLimit: a negative Limit lists every memory and trace.
func testListNoLimit(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	const n = 105
	for i := range n {
		m := memory(fmt.Sprintf("n%03d", i), fmt.Sprintf("fact number %d", i), i)
		must(t, s.PutMemory(ctx, m, nil))
	}
	def, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{})
	must(t, err)
	all, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{Limit: imprint.NoLimit})
	must(t, err)
	if len(def) != 100 || len(all) != n {
		t.Errorf("ListMemories: %d with Limit 0, %d with NoLimit; want 100 and %d", len(def), len(all), n)
	}
}

func firstErr[T any](_ T, err error) error { return err }
