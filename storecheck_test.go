package imprint

import "testing"

func TestStoreLimits(t *testing.T) {
	for _, tc := range []struct{ in, search, retry int }{
		{-1, DefaultSearchLimit, DefaultRetryLimit}, {0, DefaultSearchLimit, DefaultRetryLimit}, {1, 1, 1},
		{5000, MaxSearchLimit, 5000}, {20000, MaxSearchLimit, DefaultRetryLimit},
	} {
		if got := SearchLimit(tc.in); got != tc.search {
			t.Errorf("SearchLimit(%d) = %d, want %d", tc.in, got, tc.search)
		}
		if got := RetryLimit(tc.in); got != tc.retry {
			t.Errorf("RetryLimit(%d) = %d, want %d", tc.in, got, tc.retry)
		}
	}
}

func TestJobForEpisode(t *testing.T) {
	ep := Episode{ID: "ep1", SessionID: "s1", Scope: DefaultScope()}
	got := Job{Kind: JobCapture}.ForEpisode(ep)
	if got.EpisodeID != "ep1" || got.SessionID != "s1" || got.Scope != ep.Scope {
		t.Errorf("ForEpisode filled %+v", got)
	}
	other := Scope{Tenant: "t", User: "u", Agent: "a"}
	kept := Job{Kind: JobCapture, EpisodeID: "x", SessionID: "y", Scope: other}.ForEpisode(ep)
	if kept.EpisodeID != "x" || kept.SessionID != "y" || kept.Scope != other {
		t.Errorf("ForEpisode replaced set fields: %+v", kept)
	}
}

func TestMemoryToPut(t *testing.T) {
	now := Now()
	m, err := MemoryToPut(Memory{ID: "m2", Scope: DefaultScope(), Content: "x", Type: MemoryPersona}, []string{"m1"}, now)
	if err != nil || m.CreatedAt != now || m.UpdatedAt != now || len(m.Supersedes) != 1 {
		t.Errorf("MemoryToPut = %+v, %v", m, err)
	}
	for _, bad := range []Memory{
		{ID: "", Scope: DefaultScope(), Content: "x", Type: MemoryPersona},
		{ID: "m", Scope: DefaultScope(), Content: " ", Type: MemoryPersona},
		{ID: "m", Scope: DefaultScope(), Content: "x", Type: "mood"},
		{ID: "m", Content: "x", Type: MemoryPersona},
	} {
		if _, err := MemoryToPut(bad, nil, now); err == nil {
			t.Errorf("MemoryToPut(%+v) accepted it", bad)
		}
	}
	if _, err := MemoryToPut(Memory{ID: "m", Scope: DefaultScope(), Content: "x", Type: MemoryPersona}, []string{"m"}, now); err == nil {
		t.Error("a memory superseding itself was accepted")
	}
}
