package capture

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the result as imprint capture prints it without
// --json: one line for the episode, one per warning.
func (r Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "episode %s (session %s, %s): %d traces, %d LLM calls, %d warnings\n",
		r.EpisodeID, r.SessionID, r.ClosedBy, len(r.Traces), r.LLMCalls.Total(), len(r.Warnings))
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "  warning [%s/%s] %s\n", wn.Stage, wn.Code, wn.Message)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
