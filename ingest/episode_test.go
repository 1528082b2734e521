package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/redact/redacttest"
)

// TestPrepareEpisodes: the episodes without a scope get the one given,
// their secrets are gone before anything is captured or sent, and one bad
// episode fails the batch naming its index.
func TestPrepareEpisodes(t *testing.T) {
	t.Parallel()
	secret := redacttest.Cases()[0]
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	own := imprint.Scope{Tenant: "t", User: "u", Agent: "other"}
	eps := []imprint.Episode{
		{SessionID: "s1", Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: secret.Text}, {Role: imprint.RoleAssistant, Content: "ok"}}},
		{SessionID: "s2", Scope: own, Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: "hello"}}},
	}
	if err := PrepareEpisodes(eps, scope, redact.String); err != nil {
		t.Fatal(err)
	}
	if eps[0].Scope.Agent != "a" || eps[1].Scope.Agent != "other" {
		t.Errorf("scopes %v, %v: want the given scope only where none was set", eps[0].Scope, eps[1].Scope)
	}
	if eps[0].ID == "" {
		t.Error("episode 0 has no id after preparing")
	}
	for _, s := range secret.Secrets {
		if strings.Contains(eps[0].Turns[0].Content, s) {
			t.Errorf("turn still holds the secret: %q", eps[0].Turns[0].Content)
		}
	}

	bad := []imprint.Episode{
		{SessionID: "s1", Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: "fine"}}},
		{SessionID: "", Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: "no session"}}},
	}
	err := PrepareEpisodes(bad, scope, redact.String)
	if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), "episode 1") {
		t.Fatalf("err = %v, want ErrInvalid naming episode 1", err)
	}
}
