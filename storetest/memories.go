package storetest

import (
	"fmt"
	"sort"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

func memory(id, content string, minute int) imprint.Memory {
	return imprint.Memory{
		ID: id, Content: content, Type: imprint.MemoryPersona, Priority: 50, SceneName: "travel",
		SourceMessageIDs: []string{"m1", "m2"}, Metadata: imprint.MemoryMetadata{ActivityStartTime: "2026-05-01"},
		Timestamps: []imprint.Time{at(minute)}, CreatedAt: at(minute), UpdatedAt: at(minute), Version: 1,
		SessionID: "s1", Scope: scopeA, Supersedes: []string{}, Extractor: imprint.ExtractorLLM,
		ContentHash: "hash-" + id,
	}
}

func testMemoryRoundTrip(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	in := memory("mem1", "User prefers window seats", 0)
	in.Vec, in.Embedder = []float32{0.6, 0.8}, "e/2"
	must(t, s.PutMemory(ctx, in, nil))
	got, err := s.GetMemory(ctx, scopeA, "mem1")
	must(t, err)
	if d := diff(in, got); d != "" {
		t.Errorf("GetMemory (-want +got):\n%s", d)
	}
	_, err = s.GetMemory(ctx, scopeA, "missing")
	wantErr(t, "GetMemory unknown", err, imprint.ErrNotFound)
	// Another scope cannot take over the id.
	other := memory("mem1", "hijack", 1)
	other.Scope = scopeB
	wantErr(t, "PutMemory with another scope's id", s.PutMemory(ctx, other, nil), imprint.ErrConflict)
	got, err = s.GetMemory(ctx, scopeA, "mem1")
	must(t, err)
	if got.Content != in.Content {
		t.Errorf("conflicting put changed content to %q", got.Content)
	}
	wantErr(t, "PutMemory without content", s.PutMemory(ctx, imprint.Memory{ID: "x", Type: imprint.MemoryPersona, Scope: scopeA}, nil), imprint.ErrInvalid)
	wantErr(t, "PutMemory with a bad type", s.PutMemory(ctx, imprint.Memory{ID: "x", Content: "c", Type: "fact", Scope: scopeA}, nil), imprint.ErrInvalid)
	n, err := s.CountMemories(ctx, scopeA)
	must(t, err)
	if n != 1 {
		t.Errorf("CountMemories = %d, want 1", n)
	}
}

func testMemorySupersede(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	v1 := memory("v1", "User lives in Porto", 0)
	v2 := memory("v2", "User moved from Porto to Lisbon", 10)
	v2.Version, v2.Supersedes = 2, []string{"v1"}
	v3 := memory("v3", "User moved to Lisbon in March", 20)
	v3.Version, v3.Supersedes = 3, []string{"v2"}
	must(t, s.PutMemory(ctx, v1, nil))
	must(t, s.PutMemory(ctx, v2, []string{"v1"}))
	old, err := s.GetMemory(ctx, scopeA, "v1")
	must(t, err)
	if old.SupersededBy == nil || *old.SupersededBy != "v2" {
		t.Errorf("v1.SupersededBy = %v, want v2", old.SupersededBy)
	}
	must(t, s.PutMemory(ctx, v3, []string{"v2"}))

	live, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{})
	must(t, err)
	if d := diff([]string{"v3"}, memIDs(live)); d != "" {
		t.Errorf("ListMemories live (-want +got):\n%s", d)
	}
	all, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{AllVersions: true})
	must(t, err)
	if d := diff([]string{"v3", "v2", "v1"}, memIDs(all)); d != "" {
		t.Errorf("ListMemories all versions (-want +got):\n%s", d)
	}
	hist, err := s.MemoryHistory(ctx, scopeA, "v3")
	must(t, err)
	if d := diff([]string{"v2", "v1"}, memIDs(hist)); d != "" {
		t.Errorf("MemoryHistory(v3) (-want +got):\n%s", d)
	}
	hist, err = s.MemoryHistory(ctx, scopeA, "v1")
	must(t, err)
	if len(hist) != 0 {
		t.Errorf("MemoryHistory(v1) = %v, want none", memIDs(hist))
	}
	n, err := s.CountMemories(ctx, scopeA)
	must(t, err)
	if n != 1 {
		t.Errorf("CountMemories = %d, want 1 (superseded ones excluded)", n)
	}
	byHash, err := s.FindMemoryByHash(ctx, scopeA, "hash-v1")
	must(t, err)
	if len(byHash) != 0 {
		t.Errorf("FindMemoryByHash found a superseded memory: %v", memIDs(byHash))
	}
	hits, err := s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMemory, Text: "Porto"})
	must(t, err)
	if d := diff([]string{}, hitIDs(hits)); d != "" {
		t.Errorf("SearchText finds superseded memories (-want +got):\n%s", d)
	}
	hits, err = s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMemory, Text: "Lisbon"})
	must(t, err)
	if d := diff([]string{"v3"}, hitIDs(hits)); d != "" {
		t.Errorf("SearchText Lisbon (-want +got):\n%s", d)
	}
	// A merge supersedes several memories at once.
	a, b := memory("a", "User likes tea", 30), memory("b", "User likes green tea", 31)
	must(t, s.PutMemory(ctx, a, nil))
	must(t, s.PutMemory(ctx, b, nil))
	merged := memory("ab", "User likes green tea", 40)
	merged.Version, merged.Supersedes = 2, []string{"a", "b"}
	must(t, s.PutMemory(ctx, merged, []string{"a", "b"}))
	hist, err = s.MemoryHistory(ctx, scopeA, "ab")
	must(t, err)
	if d := diff([]string{"b", "a"}, memIDs(hist)); d != "" {
		t.Errorf("MemoryHistory of a merge (-want +got):\n%s", d)
	}
}

func testMemorySupersedeConflict(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	must(t, s.PutMemory(ctx, memory("v1", "User lives in Porto", 0), nil))
	must(t, s.PutMemory(ctx, memory("v2", "User lives in Lisbon", 1), []string{"v1"}))
	err := s.PutMemory(ctx, memory("v3", "User lives in Faro", 2), []string{"v1"})
	wantErr(t, "superseding an already superseded memory", err, imprint.ErrConflict)
	_, err = s.GetMemory(ctx, scopeA, "v3")
	wantErr(t, "the rejected memory", err, imprint.ErrNotFound)

	foreign := memory("foreign", "Another agent's fact", 0)
	foreign.Scope = scopeB
	must(t, s.PutMemory(ctx, foreign, nil))
	err = s.PutMemory(ctx, memory("v4", "steal", 3), []string{"foreign"})
	wantErr(t, "superseding another scope's memory", err, imprint.ErrConflict)
	err = s.PutMemory(ctx, memory("v5", "ghost", 3), []string{"v2", "does-not-exist"})
	wantErr(t, "superseding an unknown memory", err, imprint.ErrConflict)
	v2, err := s.GetMemory(ctx, scopeA, "v2")
	must(t, err)
	if v2.SupersededBy != nil {
		t.Errorf("a failed put superseded v2 anyway (superseded_by %q)", *v2.SupersededBy)
	}
	f, err := s.GetMemory(ctx, scopeB, "foreign")
	must(t, err)
	if f.SupersededBy != nil {
		t.Error("another scope's memory was superseded")
	}
}

func testListMemories(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	types := []imprint.MemoryType{imprint.MemoryPersona, imprint.MemoryEpisodic, imprint.MemoryInstruction}
	// Inserted out of time order on purpose.
	for _, i := range []int{3, 0, 4, 1, 2, 5} {
		m := memory(fmt.Sprintf("m%d", i), fmt.Sprintf("fact number %d", i), i)
		m.Type = types[i%3]
		if i >= 4 {
			m.SessionID = "s2"
		}
		must(t, s.PutMemory(ctx, m, nil))
	}
	all, err := s.ListMemories(ctx, scopeA, imprint.MemoryFilter{})
	must(t, err)
	if d := diff([]string{"m5", "m4", "m3", "m2", "m1", "m0"}, memIDs(all)); d != "" {
		t.Errorf("ListMemories newest first (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		name string
		f    imprint.MemoryFilter
		want []string
	}{
		{"type", imprint.MemoryFilter{Type: imprint.MemoryEpisodic}, []string{"m4", "m1"}},
		{"session", imprint.MemoryFilter{SessionID: "s2"}, []string{"m5", "m4"}},
		{"limit", imprint.MemoryFilter{Limit: 2}, []string{"m5", "m4"}},
		{"session and type", imprint.MemoryFilter{SessionID: "s1", Type: imprint.MemoryPersona}, []string{"m3", "m0"}},
	} {
		got, err := s.ListMemories(ctx, scopeA, tc.f)
		must(t, err)
		if d := diff(tc.want, memIDs(got)); d != "" {
			t.Errorf("ListMemories %s (-want +got):\n%s", tc.name, d)
		}
	}
}

func testFindMemoryByHash(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	a := memory("a", "User prefers aisle seats", 0)
	a.ContentHash = "same"
	b := memory("b", "user prefers aisle seats.", 1)
	b.ContentHash = "same"
	c := memory("c", "Something else", 2)
	other := memory("o", "User prefers aisle seats", 0)
	other.Scope, other.ContentHash = scopeB, "same"
	for _, m := range []imprint.Memory{a, b, c, other} {
		must(t, s.PutMemory(ctx, m, nil))
	}
	got, err := s.FindMemoryByHash(ctx, scopeA, "same")
	must(t, err)
	gotIDs := memIDs(got)
	sort.Strings(gotIDs)
	if d := diff([]string{"a", "b"}, gotIDs); d != "" {
		t.Errorf("FindMemoryByHash (-want +got):\n%s", d)
	}
	none, err := s.FindMemoryByHash(ctx, scopeA, "nothing-has-this")
	must(t, err)
	if len(none) != 0 {
		t.Errorf("FindMemoryByHash of an unknown hash = %v", memIDs(none))
	}
}

// testHasLiveMemoryHash checks the exact-text pre-check: the answer is
// FindMemoryByHash's (live memories of the scope only).
func testHasLiveMemoryHash(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	old, next, live := memory("m1", "User flies to Lisbon", 0), memory("m2", "User flies to Lisbon in May", 1), memory("m3", "User likes tea", 2)
	old.ContentHash, next.ContentHash, live.ContentHash = "h-old", "h-new", "h-live"
	must(t, s.PutMemory(ctx, old, nil))
	must(t, s.PutMemory(ctx, next, []string{"m1"})) // m1 is superseded
	must(t, s.PutMemory(ctx, live, nil))
	for _, tc := range []struct {
		scope imprint.Scope
		hash  string
		want  bool
	}{
		{scopeA, "h-live", true},
		{scopeA, "h-new", true},
		{scopeA, "h-old", false},
		{scopeA, "h-unknown", false},
		{scopeA, "", false},
		{scopeB, "h-live", false},
	} {
		got, err := s.HasLiveMemoryHash(ctx, tc.scope, tc.hash)
		must(t, err)
		found, err := s.FindMemoryByHash(ctx, tc.scope, tc.hash)
		must(t, err)
		liveFound := false
		for _, f := range found {
			liveFound = liveFound || f.SupersededBy == nil
		}
		if got != tc.want || got != liveFound {
			t.Errorf("HasLiveMemoryHash(%s, %q) = %v, want %v (FindMemoryByHash found %d live: %v)", tc.scope, tc.hash, got, tc.want, len(found), liveFound)
		}
	}
	_, err := s.HasLiveMemoryHash(ctx, imprint.Scope{}, "h-live")
	wantErr(t, "HasLiveMemoryHash without a scope", err, imprint.ErrInvalid)
}
