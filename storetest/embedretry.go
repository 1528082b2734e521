package storetest

import (
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// testEmbedRetry checks the embedding retry's reads and writes: the
// records of a scope without a vector, and setters that fill a vector in
// once, never across scopes, and keep the vector search up to date.
func testEmbedRetry(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	vec := func(x float32) []float32 { return []float32{x, 1 - x, 0.5} }
	for _, sc := range []imprint.Scope{scopeA, scopeB} {
		with := msg("m2", imprint.RoleUser, "has one", 1)
		with.Vec, with.Embedder = vec(0.1), "test/3"
		appendMsgs(t, s, sc, "s1", msg("m1", imprint.RoleUser, "no vector", 0), with)
	}
	mem := memory("mem1", "likes tea", 0)
	must(t, s.PutMemory(ctx, mem, nil))
	ep := episode("ep1", scopeA)
	tr := steps(1, "tr")
	tr[0].SessionID = "s1"
	must(t, s.SaveCapture(ctx, ep, tr))

	msgs, err := s.UnembeddedMessages(ctx, scopeA, 10)
	must(t, err)
	if d := diff([]string{"m1"}, msgIDs(msgs)); d != "" {
		t.Errorf("unembedded messages of A (-want +got):\n%s", d)
	}
	mems, err := s.UnembeddedMemories(ctx, scopeA, 10)
	must(t, err)
	if d := diff([]string{"mem1"}, memIDs(mems)); d != "" {
		t.Errorf("unembedded memories of A (-want +got):\n%s", d)
	}
	trs, err := s.UnembeddedTraces(ctx, scopeA, 10)
	must(t, err)
	if len(trs) != 1 || trs[0].ID != "tr-step-0" || trs[0].UserText != tr[0].UserText {
		t.Errorf("unembedded traces of A = %+v, want tr-step-0 with its text", trs)
	}
	if got, err := s.UnembeddedMemories(ctx, scopeB, 10); err != nil || len(got) != 0 {
		t.Errorf("B sees A's memory: %+v %v", memIDs(got), err)
	}
	// Searching first loads any vector index, so the setters must keep it
	// up to date.
	for _, k := range []imprint.Kind{imprint.KindMessage, imprint.KindMemory, imprint.KindTrace} {
		searchVector(t, s, imprint.VectorQuery{Scope: scopeA, Kind: k, Vector: vec(0.9), Embedder: "test/3", Limit: 5})
	}
	must(t, s.SetMessageVectors(ctx, scopeA, "s1", map[string][]float32{"m1": vec(0.9)}, "test/3"))
	must(t, s.SetMemoryVector(ctx, scopeA, "mem1", vec(0.9), "test/3"))
	must(t, s.SetMemoryVector(ctx, scopeB, "mem1", vec(0.2), "test/3")) // not B's: left alone
	must(t, s.SetTraceVectors(ctx, scopeA, "tr-step-0", vec(0.9), nil, "test/3"))
	must(t, s.SetMemoryVector(ctx, scopeA, "mem1", vec(0.0), "test/3")) // never replaces
	for _, c := range []struct {
		kind imprint.Kind
		id   string
	}{{imprint.KindMessage, "m1"}, {imprint.KindMemory, "mem1"}, {imprint.KindTrace, "tr-step-0"}} {
		hits := searchVector(t, s, imprint.VectorQuery{Scope: scopeA, Kind: c.kind, Vector: vec(0.9), Embedder: "test/3", MinScore: 0.999, Limit: 5})
		if d := diff([]string{c.id}, hitIDs(hits)); d != "" {
			t.Errorf("%s: vector hits after the retry (-want +got):\n%s", c.kind, d)
		}
	}
	if m, _ := s.UnembeddedMessages(ctx, scopeA, 10); len(m) != 0 {
		t.Errorf("messages still unembedded: %v", msgIDs(m))
	}
	if m, _ := s.UnembeddedMemories(ctx, scopeA, 10); len(m) != 0 {
		t.Errorf("memories still unembedded: %v", memIDs(m))
	}
	if tr, _ := s.UnembeddedTraces(ctx, scopeA, 10); len(tr) != 0 {
		t.Errorf("traces still unembedded: %v", traceIDs(tr))
	}
	if m, _ := s.UnembeddedMessages(ctx, scopeB, 10); len(m) != 1 {
		t.Errorf("B's message was embedded by A's call: %v", msgIDs(m))
	}
}
