package record

import (
	"errors"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestRecordRejectsUnusableIDsAndTimes checks the library path of imprint
// record and imports: a session id or message id with control characters
// or over 256 bytes, or a time outside years 1970-9999, is ErrInvalid
// naming the field, and nothing is stored.
func TestRecordRejectsUnusableIDsAndTimes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	ok := imprint.Message{Role: imprint.RoleUser, Content: "I moved to Porto"}
	far := ok
	far.Timestamp = imprint.Time{Time: imprint.FromEpochMillis(0).AddDate(-1, 0, 0)}
	for _, tc := range []struct {
		name, session string
		msg           imprint.Message
		says          string
	}{
		{"NUL session id", "s\x00", ok, "session_id must not contain control characters"},
		{"100k session id", strings.Repeat("s", 100_000), ok, "session_id is longer than 256 bytes"},
		{"message id with a newline", "s", imprint.Message{ID: "m\n1", Role: imprint.RoleUser, Content: "hi"}, "messages[0].id"},
		{"message id not UTF-8", "s", imprint.Message{ID: "m\xff", Role: imprint.RoleUser, Content: "hi"}, "messages[0].id is not valid UTF-8"},
		{"time before 1970", "s", far, "messages[0].timestamp: year 1969"},
	} {
		_, err := f.rec.Record(t.Context(), imprint.DefaultScope(), tc.session, []imprint.Message{tc.msg})
		if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: Record error %v, want ErrInvalid saying %q", tc.name, err, tc.says)
		}
	}
	if ss, err := f.db.ListSessions(t.Context(), imprint.DefaultScope()); err != nil || len(ss) != 0 {
		t.Errorf("sessions after the rejected records: %d, %v", len(ss), err)
	}
}
