package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

func TestEmbedRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := imprint.Scope{Tenant: "t", User: "ana", Agent: "a"}
	b := imprint.Scope{Tenant: "t", User: "bob", Agent: "a"}
	vec := func(x float32) []float32 { return []float32{x, 1 - x, 0.5} }
	for _, sc := range []imprint.Scope{a, b} {
		if _, err := db.AppendMessages(ctx, sc, "s1", []imprint.Message{
			{ID: "m1", SessionID: "s1", Scope: sc, Role: imprint.RoleUser, Content: "no vector", Timestamp: imprint.Now()},
			{ID: "m2", SessionID: "s1", Scope: sc, Role: imprint.RoleUser, Content: "has one", Timestamp: imprint.Now(), Vec: vec(0.1), Embedder: "test/3"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	now := imprint.Now()
	if err := db.PutMemory(ctx, imprint.Memory{ID: "mem1", Scope: a, SessionID: "s1", Content: "likes tea", Type: imprint.MemoryPersona,
		Version: 1, Extractor: imprint.ExtractorHeuristic, CreatedAt: now, UpdatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	ep := imprint.Episode{ID: "ep1", SessionID: "s1", Scope: a, Status: imprint.EpisodeFinalized, ClosedBy: imprint.ClosedFinalized,
		Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: "look it up", TS: now}}}
	if err := db.SaveCapture(ctx, ep, []imprint.Trace{{ID: "tr1", EpisodeID: "ep1", SessionID: "s1", Scope: a, StepKey: "0",
		UserText: "look it up", TS: now}}); err != nil {
		t.Fatal(err)
	}

	msgs, err := db.UnembeddedMessages(ctx, a, 10)
	if err != nil || len(msgs) != 1 || msgs[0].ID != "m1" {
		t.Fatalf("unembedded messages of a: %+v %v", msgs, err)
	}
	mems, err := db.UnembeddedMemories(ctx, a, 10)
	if err != nil || len(mems) != 1 || mems[0].ID != "mem1" {
		t.Fatalf("unembedded memories of a: %+v %v", mems, err)
	}
	trs, err := db.UnembeddedTraces(ctx, a, 10)
	if err != nil || len(trs) != 1 || trs[0].ID != "tr1" || trs[0].UserText != "look it up" {
		t.Fatalf("unembedded traces of a: %+v %v", trs, err)
	}
	if got, _ := db.UnembeddedMemories(ctx, b, 10); len(got) != 0 {
		t.Fatalf("b sees a's memory: %+v", got)
	}
	// Searching first loads the vector indexes, so the setters must keep
	// them up to date.
	for _, k := range []imprint.Kind{imprint.KindMessage, imprint.KindMemory, imprint.KindTrace} {
		if _, err := db.SearchVector(ctx, imprint.VectorQuery{Scope: a, Kind: k, Vector: vec(0.9), Embedder: "test/3", Limit: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetMessageVectors(ctx, a, "s1", map[string][]float32{"m1": vec(0.9)}, "test/3"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMemoryVector(ctx, a, "mem1", vec(0.9), "test/3"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMemoryVector(ctx, b, "mem1", vec(0.2), "test/3"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetTraceVectors(ctx, a, "tr1", vec(0.9), nil, "test/3"); err != nil {
		t.Fatal(err)
	}
	// A second set never replaces a vector.
	if err := db.SetMemoryVector(ctx, a, "mem1", vec(0.0), "test/3"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind imprint.Kind
		id   string
	}{{imprint.KindMessage, "m1"}, {imprint.KindMemory, "mem1"}, {imprint.KindTrace, "tr1"}} {
		hits, err := db.SearchVector(ctx, imprint.VectorQuery{Scope: a, Kind: c.kind, Vector: vec(0.9), Embedder: "test/3", MinScore: 0.999, Limit: 5})
		if err != nil || len(hits) != 1 || hits[0].ID != c.id {
			t.Errorf("%s: vector hits %+v %v, want %s", c.kind, hits, err, c.id)
		}
	}
	if m, _ := db.UnembeddedMessages(ctx, a, 10); len(m) != 0 {
		t.Errorf("messages still unembedded: %+v", m)
	}
	if m, _ := db.UnembeddedMemories(ctx, a, 10); len(m) != 0 {
		t.Errorf("memories still unembedded: %+v", m)
	}
	if tr, _ := db.UnembeddedTraces(ctx, a, 10); len(tr) != 0 {
		t.Errorf("traces still unembedded: %+v", tr)
	}
	if m, _ := db.UnembeddedMessages(ctx, b, 10); len(m) != 1 {
		t.Errorf("b's message was embedded by a's call: %+v", m)
	}
}
