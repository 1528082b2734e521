package storetest

import (
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

func testBrowse(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	b, _ := imprint.AsBrowser(s)
	_, err := b.CountRecords(ctx, imprint.Scope{Tenant: "acme"})
	wantErr(t, "CountRecords of an incomplete scope", err, imprint.ErrInvalid)
	_, err = b.ListEpisodes(ctx, imprint.Scope{}, imprint.EpisodeFilter{})
	wantErr(t, "ListEpisodes of an incomplete scope", err, imprint.ErrInvalid)

	appendMsgs(t, s, scopeA, "s1", msg("m1", imprint.RoleUser, "first", 0), msg("m2", imprint.RoleAssistant, "second", 1))
	appendMsgs(t, s, scopeA, "s2", msg("m1", imprint.RoleUser, "other session", 2))
	appendMsgs(t, s, scopeB, "s1", msg("m1", imprint.RoleUser, "other scope", 0))
	e1, e2 := episode("ep-1", scopeA), episode("ep-2", scopeA)
	e2.SessionID, e2.CreatedAt = "s2", at(5)
	must(t, s.SaveCapture(ctx, e1, steps(2, "a")))
	must(t, s.SaveCapture(ctx, e2, steps(1, "b")))
	must(t, s.SaveCapture(ctx, episode("ep-b", scopeB), steps(3, "c")))
	old := memory("p1", "likes tea", 0)
	must(t, s.PutMemory(ctx, old, nil))
	newer := memory("p2", "likes green tea", 1)
	newer.Supersedes = []string{"p1"}
	must(t, s.PutMemory(ctx, newer, []string{"p1"}))
	ins := memory("i1", "always answer in English", 2)
	ins.Type = imprint.MemoryInstruction
	must(t, s.PutMemory(ctx, ins, nil))

	gone := memory("e1", "went to Lisbon", 3)
	gone.Type = imprint.MemoryEpisodic
	must(t, s.PutMemory(ctx, gone, nil))
	_, err = s.RetireMemory(ctx, scopeA, "e1", at(4).Time)
	must(t, err)

	// Live memories only: neither superseded (p1) nor forgotten (e1).
	got, err := b.CountRecords(ctx, scopeA)
	must(t, err)
	want := imprint.RecordCounts{Sessions: 2, Messages: 3, Episodes: 2, Traces: 3,
		Memories: map[imprint.MemoryType]int{imprint.MemoryPersona: 1, imprint.MemoryInstruction: 1}}
	if d := diff(want, got); d != "" {
		t.Errorf("CountRecords of scope A (-want +got):\n%s", d)
	}

	eps, err := b.ListEpisodes(ctx, scopeA, imprint.EpisodeFilter{})
	must(t, err)
	if len(eps) != 2 || eps[0].ID != "ep-2" || eps[1].ID != "ep-1" {
		t.Fatalf("ListEpisodes of scope A = %v, want ep-2 then ep-1 (newest first)", episodeIDs(eps))
	}
	if eps[1].TurnCount != 3 || len(eps[1].Turns) != 0 || len(eps[1].TraceIDs) != 2 || eps[1].Meta.TaskID != "7" {
		t.Errorf("ep-1 listed with %d turns counted, %d turns, trace ids %v, meta %+v; want 3 counted, none read, 2 trace ids, task 7",
			eps[1].TurnCount, len(eps[1].Turns), eps[1].TraceIDs, eps[1].Meta)
	}
	eps, err = b.ListEpisodes(ctx, scopeA, imprint.EpisodeFilter{SessionID: "s1", Limit: 5})
	must(t, err)
	if len(eps) != 1 || eps[0].ID != "ep-1" {
		t.Errorf("ListEpisodes of session s1 = %v, want [ep-1]", episodeIDs(eps))
	}
	eps, err = b.ListEpisodes(ctx, scopeA, imprint.EpisodeFilter{Limit: 1})
	must(t, err)
	if len(eps) != 1 {
		t.Errorf("ListEpisodes with limit 1 gave %d", len(eps))
	}

	// A live episode's turns are counted too.
	if live, ok := s.(imprint.LiveEpisodeStore); ok {
		_, err := live.AppendTurns(ctx, scopeA, "s3", []imprint.Turn{turn("u1", imprint.RoleUser, "hi", 10), turn("a1", imprint.RoleAssistant, "hello", 11)}, "ep-live")
		must(t, err)
		eps, err = b.ListEpisodes(ctx, scopeA, imprint.EpisodeFilter{SessionID: "s3"})
		must(t, err)
		if len(eps) != 1 || eps[0].TurnCount != 2 || eps[0].Status != imprint.EpisodeOpen {
			t.Errorf("the live episode listed as %+v, want one open episode of 2 turns", eps)
		}
	}
}

func episodeIDs(eps []imprint.Episode) []string {
	out := []string{}
	for _, e := range eps {
		out = append(out, e.ID)
	}
	return out
}
