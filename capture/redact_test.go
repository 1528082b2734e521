package capture

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestRunRedactsBeforeStoring checks that a secret in any turn field never
// reaches a trace, the stored episode, or the result.
func TestRunRedactsBeforeStoring(t *testing.T) {
	t.Parallel()
	const secret = "sk-TESTSECRET0123456789abcdef"
	fake := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }
	st := openDB(t)
	r := NewRunner(Deps{Store: st, Redact: fake}, DefaultConfig())
	ep := imprint.Episode{SessionID: "s", Scope: imprint.DefaultScope(), Turns: []imprint.Turn{
		{Role: imprint.RoleUser, Content: "my key is " + secret},
		{Role: imprint.RoleAssistant, Content: "Using it.", Meta: imprint.TurnMeta{Reflection: "Because " + secret + " was given by the user."}},
		{Role: imprint.RoleTool, Content: "ok " + secret, Meta: imprint.TurnMeta{Name: "login", Input: json.RawMessage(`{"key":"` + secret + `"}`), Error: "bad " + secret}},
	}}
	res, err := r.Run(context.Background(), ep, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), secret) {
		t.Fatalf("secret in capture result: %s", b)
	}
	stored, err := st.GetEpisode(context.Background(), imprint.DefaultScope(), res.EpisodeID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(stored)
	if strings.Contains(string(b), secret) {
		t.Fatalf("secret in stored episode: %s", b)
	}
	trs, err := st.ListTraces(context.Background(), imprint.DefaultScope(), imprint.TraceFilter{EpisodeID: res.EpisodeID})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(trs)
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), "[REDACTED]") {
		t.Fatalf("stored traces not redacted: %s", b)
	}
}
