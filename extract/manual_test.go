package extract

import (
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// TestTypeOfAsksTheModel: with a model, a memory added by hand without a
// type takes the type the extraction prompt gives it, from one call that
// carries the text as a user message; a failing model falls back to the
// heuristic rules.
func TestTypeOfAsksTheModel(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, DefaultConfig())
	e.srv.Script(OpExtract, scenesReply(scene{Name: "Prefs", IDs: []string{"m1"}, Memories: []mem{{Content: "User prefers tea", Type: "persona", Sources: []string{"m1"}}}}))
	if got := e.runner.TypeOf(e.ctx, e.scope, "we had tea yesterday and I liked it"); got != imprint.MemoryPersona {
		t.Errorf("TypeOf with the model = %s, want the model's persona", got)
	}
	reqs := e.srv.RequestsFor(OpExtract)
	if len(reqs) != 1 || !strings.Contains(reqs[0].User, "we had tea yesterday") {
		t.Fatalf("the model saw %d extraction calls, want 1 carrying the text", len(reqs))
	}
	e.srv.Script(OpExtract, llmtest.Fault500())
	if got := e.runner.TypeOf(e.ctx, e.scope, "From now on, always answer in French."); got != imprint.MemoryInstruction {
		t.Errorf("TypeOf with a failing model = %s, want the heuristic instruction", got)
	}
}

// TestRememberNamesTheDuplicateItsWorkspaceSees: a fact remembered again
// in a workspace is reported as the copy that workspace sees (its own,
// else the one shared by every workspace), never another workspace's.
func TestRememberNamesTheDuplicateItsWorkspaceSees(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, DefaultConfig(), withoutLLM())
	remember := func(ws string) (imprint.Memory, string) {
		t.Helper()
		m, action, err := e.runner.Remember(e.ctx, e.scope, imprint.Memory{Content: "Always use pnpm in this repo", Type: imprint.MemoryInstruction, Workspace: ws})
		if err != nil {
			t.Fatalf("remember in %q: %v", ws, err)
		}
		return m, action
	}
	a, _ := remember("/w/a")
	remember("/w/b")
	shared, action := remember("")
	if action != imprint.RememberStored || shared.ID == a.ID {
		t.Fatalf("remember without a workspace = %s %s, want a new memory shared by every workspace", action, shared.ID)
	}
	got, action := remember("/w/c")
	if action != imprint.RememberDuplicate || got.ID != shared.ID {
		t.Errorf("remember in /w/c = %s %s (workspace %q), want the duplicate %s shared by every workspace (not /w/a's %s)", action, got.ID, got.Workspace, shared.ID, a.ID)
	}
	again, action := remember("/w/a")
	if action != imprint.RememberDuplicate || again.ID != a.ID {
		t.Errorf("remember in /w/a again = %s %s, want /w/a's own %s", action, again.ID, a.ID)
	}
}
