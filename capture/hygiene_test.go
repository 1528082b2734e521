package capture

import (
	"errors"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestPrepareRejectsUnusableIDs checks the door of every captured episode
// (POST /v1/episodes, imprint capture, imports): an episode, session or
// turn id with control characters or over 256 bytes, or a turn time
// outside years 1970-9999, is ErrInvalid naming the field.
func TestPrepareRejectsUnusableIDs(t *testing.T) {
	t.Parallel()
	r := NewRunner(Deps{}, DefaultConfig())
	base := func() imprint.Episode {
		return imprint.Episode{SessionID: "s", Turns: []imprint.Turn{
			{Role: imprint.RoleUser, Content: "Book a flight"}, {ID: "a1", Role: imprint.RoleAssistant, Content: "Done"}}}
	}
	for _, tc := range []struct {
		name string
		edit func(*imprint.Episode)
		says string
	}{
		{"session id with NUL", func(ep *imprint.Episode) { ep.SessionID = "s\x00" }, "episode session_id must not contain control characters"},
		{"long episode id", func(ep *imprint.Episode) { ep.ID = strings.Repeat("e", 257) }, "episode id is longer than 256 bytes"},
		{"turn id not UTF-8", func(ep *imprint.Episode) { ep.Turns[1].ID = "a\xc3" }, "episode turns[1].id is not valid UTF-8"},
		{"turn time in year 21970", func(ep *imprint.Episode) {
			ep.Turns[0].TS = imprint.Time{Time: imprint.FromEpochMillis(0).AddDate(20000, 0, 0)}
		}, "episode turns[0].ts"},
		{"scope part with a tab", func(ep *imprint.Episode) { ep.Scope.Agent = "a\tb" }, "scope.agent must not contain control characters"},
	} {
		ep := base()
		tc.edit(&ep)
		if _, err := r.Prepare(ep, ""); !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: Prepare error %v, want ErrInvalid saying %q", tc.name, err, tc.says)
		}
	}
	if _, err := r.Prepare(base(), ""); err != nil {
		t.Errorf("a valid episode: %v", err)
	}
}
