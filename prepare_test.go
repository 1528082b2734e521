package imprint

import (
	"errors"
	"strings"
	"testing"
)

// TestPrepareEpisodeAsStored: an episode is stored with its derived id, the
// times it lacks, its texts fit to store and its secrets replaced; an
// unknown role is refused naming the turn.
func TestPrepareEpisodeAsStored(t *testing.T) {
	t.Parallel()
	now := FromEpochMillis(1_700_000_000_000)
	ep := Episode{SessionID: " s1 ", Turns: []Turn{
		{Role: RoleUser, Content: "my key is sk-123\x00 ok"},
		{Role: RoleAssistant, Content: "bad \xff byte", Meta: TurnMeta{Input: []byte("not json")}},
	}}
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-123", "[REDACTED]") }
	got, err := PrepareEpisode(ep, "", now, redact)
	if err != nil {
		t.Fatal(err)
	}
	if got.SessionID != "s1" || got.ID != DeriveEpisodeID(Episode{SessionID: "s1", Turns: ep.Turns}) {
		t.Errorf("session %q id %q, want s1 and the derived id", got.SessionID, got.ID)
	}
	if got.Status != EpisodeFinalized || got.ClosedBy != ClosedFinalized || !got.StartedAt.Equal(now.Time) || !got.Turns[1].TS.Equal(now.Time) {
		t.Errorf("status %s closed by %s started %v, want finalized at now", got.Status, got.ClosedBy, got.StartedAt)
	}
	if c := got.Turns[0].Content; c != "my key is [REDACTED] ok" {
		t.Errorf("content %q, want the secret and the NUL gone", c)
	}
	if c, in := got.Turns[1].Content, string(got.Turns[1].Meta.Input); c != "bad \uFFFD byte" || in != `"not json"` {
		t.Errorf("content %q input %s, want invalid UTF-8 replaced and the input a JSON string", c, in)
	}
	if ep.Turns[0].Content != "my key is sk-123\x00 ok" {
		t.Error("PrepareEpisode changed the caller's turns")
	}
	ep.Turns[1].Role = "robot"
	if _, err := PrepareEpisode(ep, "", now, nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "episode turns[1].role") {
		t.Errorf("unknown role: %v, want ErrInvalid naming episode turns[1].role", err)
	}
}
