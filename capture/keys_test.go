package capture

import (
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestDerivedIDsOfPlainAndLookAlikeParts: episodes and traces keep the
// ids earlier versions derived (capturing again replaces, never adds),
// and episodes or traces whose parts only look alike when joined get
// distinct ids.
func TestDerivedIDsOfPlainAndLookAlikeParts(t *testing.T) {
	ts, err := imprint.ParseTime("2026-01-02T03:04:05Z")
	if err != nil {
		t.Fatal(err)
	}
	// An episode's workspace is not part of its identity: the id is the
	// same whichever project it was read in.
	ep := func(agent, ws, session, content string) imprint.Episode {
		return imprint.Episode{Scope: imprint.Scope{Tenant: "t", User: "u", Agent: agent}, Workspace: ws, SessionID: session,
			Turns: []imprint.Turn{{Role: imprint.RoleUser, TS: ts, Content: content}}}
	}
	if got := DeriveEpisodeID(ep("ag:d", "", "a:b", "50% off: a/b")); got != "18def2c1-842e-8cf7-b355-0afaa4d9a853" {
		t.Errorf("DeriveEpisodeID = %s, want the id of earlier versions", got)
	}
	if got := DeriveEpisodeID(ep("ag:d", "/src/app", "a:b", "50% off: a/b")); got != "18def2c1-842e-8cf7-b355-0afaa4d9a853" {
		t.Errorf("DeriveEpisodeID = %s, want the id of earlier versions", got)
	}
	if got := TraceID("ep:1", "step/0"); got != "7801190c-88ae-8541-b19e-7cfda15d985d" {
		t.Errorf("TraceID = %s, want the id of earlier versions", got)
	}
	if a, b := DeriveEpisodeID(ep("w\x1f", "", "s", "hi")), DeriveEpisodeID(ep("w", "", "\x1fs", "hi")); a == b {
		t.Errorf("episodes of look-alike agents and sessions share the id %s", a)
	}
	if a, b := TraceID("e\x1f", "k"), TraceID("e", "\x1fk"); a == b {
		t.Errorf("traces of look-alike episodes and steps share the id %s", a)
	}
}
