package session_test

import (
	"errors"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestAppendTurnsRejectsUnusableIDs checks that a live session id or turn
// id with control characters or over 256 bytes, or a turn time outside
// years 1970-9999, is ErrInvalid naming it, and nothing is written.
func TestAppendTurnsRejectsUnusableIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hi := imprint.Turn{Role: imprint.RoleUser, Content: "hi"}
	late := hi
	late.TS = imprint.Time{Time: imprint.FromEpochMillis(0).AddDate(9000, 0, 0)}
	for _, tc := range []struct {
		name, session string
		turn          imprint.Turn
		says          string
	}{
		{"NUL session id", "s\x001", hi, "session_id must not contain control characters (NUL"},
		{"300-byte session id", strings.Repeat("x", 300), hi, "session_id is longer than 256 bytes"},
		{"turn id with an escape", "s", imprint.Turn{ID: "t\x1b[1m", Role: imprint.RoleTool, Content: "{}"}, "turns[0].id must not contain control characters"},
		{"turn time in year 10970", "s", late, "turns[0].ts: year 10970"},
	} {
		_, err := f.m.AppendTurns(t.Context(), scope, tc.session, []imprint.Turn{tc.turn})
		if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: AppendTurns error %v, want ErrInvalid saying %q", tc.name, err, tc.says)
		}
	}
	if ss, err := f.db.ListSessions(t.Context(), scope); err != nil || len(ss) != 0 {
		t.Errorf("sessions after the rejected appends: %d, %v", len(ss), err)
	}
}
