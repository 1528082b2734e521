package extract

import (
	"slices"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// TestBatchPlannedKeepsWorkspaces checks that a fact of one workspace is
// no duplicate of the same fact planned for another workspace in the same
// commit batch (ExtractSessions batches whatever is planned): as when the
// sessions are extracted one after the other, both are stored. With and
// without a LiveHashLister.
func TestBatchPlannedKeepsWorkspaces(t *testing.T) {
	t.Parallel()
	for _, listing := range []bool{false, true} {
		name := "hash-by-hash"
		if listing {
			name = "live-hash-lister"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, DefaultConfig(), withoutLLM(), withEmbedder())
			if listing {
				e.deps.Store = &hashListingStore{Store: e.store}
				e.runner = NewRunner(e.deps, e.cfg)
			}
			put := func(session, ws string, at time.Time) {
				msg := imprint.Message{ID: session + "-1", Role: imprint.RoleUser, Content: "I work as a pilot in Porto.",
					Workspace: ws, Timestamp: imprint.At(at)}
				if _, err := e.db.AppendMessages(e.ctx, e.scope, session, []imprint.Message{msg}); err != nil {
					t.Fatal(err)
				}
			}
			put("a", "/w/a", e.baseDay)
			put("b", "/w/b", e.baseDay.Add(time.Hour))
			scope := e.scope.WithDefaults()

			// The two sessions in one batch, as ExtractSessions commits
			// them when b is planned by the time a is committed.
			var plan []*plannedWindow
			for _, sid := range []string{"a", "b"} {
				ws, _, err := e.runner.planSession(e.ctx, scope, sid)
				if err != nil || len(ws) != 1 || len(ws[0].mems) == 0 {
					t.Fatalf("plan %s: %d windows, %v", sid, len(ws), err)
				}
				plan = append(plan, ws...)
			}
			dec := map[string]Decisions{}
			e.runner.runPlanned(e.ctx, scope, plan, map[string]bool{}, func(r Result) { dec[r.SessionID] = r.Decisions },
				func(string, error) error { return nil })

			var wss []string
			for _, m := range e.live() {
				wss = append(wss, m.Workspace)
			}
			slices.Sort(wss)
			// One by one (TestBatchAsksLiveHashesOnce's s4 and s5): one
			// memory in each workspace.
			if !slices.Equal(wss, []string{"/w/a", "/w/b"}) {
				t.Errorf("live memories in workspaces %q, want one in /w/a and one in /w/b; decisions a %+v, b %+v",
					wss, dec["a"], dec["b"])
			}
		})
	}
}
