package session_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/session"
	"github.com/imprint-dev/imprint/sqlite"
)

// TestAppendTurnsRedactsBeforeWriting: a secret in any text of a live turn
// reaches neither the open episode nor the recorded messages (the recorder
// here redacts nothing itself), and posting the same turns again still
// adds nothing.
func TestAppendTurnsRedactsBeforeWriting(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-7f3a9c"
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	rec := record.NewRecorder(record.Deps{Store: db}, record.Config{EveryNRounds: 5})
	m := session.NewManager(session.ManagerDeps{Store: db, Recorder: recorderAdapter{rec},
		Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED:test]") }}, session.ManagerConfig{})
	ts := imprint.Now()
	turns := []imprint.Turn{
		{Role: imprint.RoleUser, Content: "my token is " + secret, TS: ts},
		{Role: imprint.RoleAssistant, Content: "using " + secret, TS: ts,
			Meta: imprint.TurnMeta{Name: "Bash", Input: json.RawMessage(`{"cmd": "login ` + secret + `"}`), Thinking: "got " + secret}},
		{ID: "tool-1", Role: imprint.RoleTool, Content: "logged in with " + secret, TS: ts, Meta: imprint.TurnMeta{Error: "warn " + secret}},
	}
	for range 2 {
		if _, err := m.AppendTurns(t.Context(), scope, "live", turns); err != nil {
			t.Fatal(err)
		}
	}
	ep, err := db.OpenEpisode(t.Context(), scope, "live")
	if err != nil {
		t.Fatal(err)
	}
	full, err := db.GetEpisode(t.Context(), scope, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(full)
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), "[REDACTED:test]") {
		t.Errorf("stored episode not redacted: %s", b)
	}
	if len(full.Turns) != len(turns) {
		t.Errorf("%d turns stored after posting %d twice, want %d", len(full.Turns), len(turns), len(turns))
	}
	msgs, err := db.PendingMessages(t.Context(), scope, "live", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Errorf("%d messages recorded, want 2", len(msgs))
	}
	for _, msg := range msgs {
		if strings.Contains(msg.Content, secret) {
			t.Errorf("recorded message holds the secret: %q", msg.Content)
		}
	}
}
