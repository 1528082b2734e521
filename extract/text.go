package extract

import (
	"fmt"
	"io"
	"strings"

	"github.com/imprint-dev/imprint/internal/clitext"
)

// contentRunes is how much of a stored memory WriteText shows.
const contentRunes = 100

// WriteText writes the window's result as imprint extract prints it
// without --json: the window and its decisions, each memory written, each
// warning.
func (r Result) WriteText(w io.Writer) error {
	var b strings.Builder
	status := "ok"
	if !r.Success {
		status = "FAILED"
	}
	fmt.Fprintf(&b, "session %s: window of %d messages %s — extracted %d, store %d, update %d, merge %d, skip %d\n",
		r.SessionID, len(r.MessageIDs), status, r.ExtractedCount,
		r.Decisions.Store, r.Decisions.Update, r.Decisions.Merge, r.Decisions.Skip)
	for _, m := range r.Records {
		fmt.Fprintf(&b, "  + [%s p=%d] %s\n", m.Type, m.Priority, clitext.OneLine(m.Content, contentRunes))
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "  warning [%s/%s] %s\n", wn.Stage, wn.Code, wn.Message)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
