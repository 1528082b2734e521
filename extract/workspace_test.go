package extract

import (
	"fmt"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// recordIn appends user messages of workspace ws to a session, one minute
// apart from at.
func (e *testEnv) recordIn(ws, session string, at time.Time, contents ...string) {
	e.t.Helper()
	prior := e.counts[session]
	e.counts[session] += len(contents)
	msgs := make([]imprint.Message, len(contents))
	for i, c := range contents {
		msgs[i] = imprint.Message{ID: fmt.Sprintf("%s-%d", session, prior+i+1), Role: imprint.RoleUser, Content: c,
			Timestamp: imprint.At(at.Add(time.Duration(i) * time.Minute)), Workspace: ws}
	}
	if _, err := e.db.AppendMessages(e.ctx, e.scope, session, msgs); err != nil {
		e.t.Fatal(err)
	}
}

// TestMemoriesKeepTheirWorkspace: a memory extracted from a session of a
// workspace holds for that workspace ("always use pnpm in this repo" stays
// in the repo); the same words said in another workspace are a memory of
// that one, not a duplicate, while words already stored for every
// workspace are one.
func TestMemoriesKeepTheirWorkspace(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, DefaultConfig(), withoutLLM())
	rule := "From now on, always use pnpm in this repo."
	fact := "I am allergic to peanuts."
	e.recordIn("", "global", e.baseDay, fact)
	e.recordIn("/src/app", "app", e.baseDay.Add(time.Hour), rule, fact)
	e.recordIn("/src/site", "site", e.baseDay.Add(2*time.Hour), rule, fact)
	for _, s := range []string{"global", "app", "site"} {
		if _, err := e.extractAll(s); err != nil {
			t.Fatalf("extract %s: %v", s, err)
		}
	}
	byWorkspace := map[string][]string{}
	for _, m := range e.live() {
		byWorkspace[m.Workspace] = append(byWorkspace[m.Workspace], string(m.Type)+": "+m.Content)
	}
	for ws, want := range map[string]int{"": 1, "/src/app": 1, "/src/site": 1} {
		if len(byWorkspace[ws]) != want {
			t.Errorf("workspace %q holds %v, want %d memory", ws, byWorkspace[ws], want)
		}
	}
	for _, ws := range []string{"/src/app", "/src/site"} {
		if got := byWorkspace[ws]; len(got) == 1 && got[0] == byWorkspace[""][0] {
			t.Errorf("workspace %s stored the fact every workspace has: %v", ws, got)
		}
	}
}

// TestDedupCandidatesComeFromTheWorkspaceAndTheGlobalOnes: the judge of
// a new memory of a workspace sees candidates of that workspace and of
// none, never another workspace's, whichever recall tier finds them.
func TestDedupCandidatesComeFromTheWorkspaceAndTheGlobalOnes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []envOpt
	}{{"vector", []envOpt{withEmbedder()}}, {"keyword", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, DefaultConfig(), tc.opts...)
			e.srv.Handle(OpExtract, rememberExtractor(t, "tools"))
			var seen []string
			e.srv.Handle(OpDedup, func(r llmtest.Request) llmtest.Reply {
				for _, c := range parseJudge(t, r.User).Candidates {
					seen = append(seen, c.ID)
				}
				return storeAllJudge(t)(r)
			})
			in := func(ws, content string) string {
				m := e.putMemory(content, imprint.MemoryPersona)
				m.Workspace = ws
				if err := e.db.PutMemory(e.ctx, m, nil); err != nil {
					t.Fatal(err)
				}
				return m.ID
			}
			global := in("", "User installs packages with pnpm")
			app := in("/src/app", "User installs packages with pnpm here")
			site := in("/src/site", "User installs packages with pnpm there")
			e.recordIn("/src/app", "app", e.baseDay, "remember: User installs packages with pnpm always")
			if _, err := e.extractAll("app"); err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, id := range seen {
				got[id] = true
			}
			if got[site] {
				t.Errorf("the judge saw %s of another workspace among %v", site, seen)
			}
			if !got[global] || !got[app] {
				t.Errorf("the judge saw %v, want the global %s and the workspace's %s", seen, global, app)
			}
		})
	}
}
