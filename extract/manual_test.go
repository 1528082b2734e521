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
