package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/importer"
)

// Rough sizes of the fixed parts of the prompts, in estimated tokens, used
// by import --dry-run. They are estimates, not accounting: real runs record
// the provider's usage.
const (
	estCaptureOverhead = 450 // batched scoring instructions + JSON framing
	estAlphaOverhead   = 250 // per-step grading instructions
	estExtractOverhead = 600 // extraction system prompt
	estDedupPerWindow  = 420 // judge prompt with a handful of candidates
	estToolOutputRunes = 2000
)

// Estimate accumulates what a real import would send to an LLM: Calls
// LLM calls with Tokens prompt tokens in all.
type Estimate struct {
	// Capture is the capture runner's configuration (defaults filled in).
	Capture capture.Config
	Calls   int
	Tokens  int
	// newQualified counts, per session, the new messages that pass the
	// quality gate, and their estimated tokens.
	newQualified map[string][2]int
}

// Messages returns how many of tr's messages are not recorded yet and notes
// the qualified ones for the extraction estimate.
func (e *Estimate) Messages(ctx context.Context, st imprint.Store, scope imprint.Scope, tr importer.Transcript) (int, error) {
	if e.newQualified == nil {
		e.newQualified = map[string][2]int{}
	}
	n := 0
	for _, m := range tr.Messages {
		if m.ID != "" {
			_, err := st.GetMessage(ctx, scope, tr.SessionID, m.ID)
			if err == nil {
				continue
			}
			if !errors.Is(err, imprint.ErrNotFound) {
				return 0, fmt.Errorf("dry run: %w", err)
			}
		}
		if strings.TrimSpace(m.Content) == "" {
			continue
		}
		n++
		if ok, _ := extract.ShouldExtract(m.Content); ok {
			q := e.newQualified[tr.SessionID]
			q[0]++
			q[1] += imprint.EstimateTokens(m.Content) + 12 // id, role and time of the block
			e.newQualified[tr.SessionID] = q
		}
	}
	return n, nil
}

// Episode adds the scoring calls capture would make for ep, as
// capture.PlannedCalls counts them under the capture runner's
// configuration: none for an abandoned episode that is not captured.
// Prompt tokens are the episode's text (tool outputs cut) plus the
// instructions of each call.
func (e *Estimate) Episode(ep imprint.Episode) {
	c := e.Capture
	if ep.ClosedBy == imprint.ClosedAbandoned && !c.CaptureAbandoned {
		return
	}
	steps := capture.Normalize(capture.ExtractSteps(ep), c)
	planned := capture.PlannedCalls(steps, c)
	calls := planned.Total()
	if calls == 0 {
		return
	}
	tokens := 0
	for _, t := range ep.Turns {
		text := t.Content
		if t.Role == imprint.RoleTool && len([]rune(text)) > estToolOutputRunes {
			text = string([]rune(text)[:estToolOutputRunes])
		}
		tokens += imprint.EstimateTokens(text)
	}
	overhead := estAlphaOverhead
	if planned.BatchedReflection > 0 {
		overhead = estCaptureOverhead
	}
	e.Calls += calls
	e.Tokens += calls*overhead + tokens
}

// Pending adds the extraction windows of the sessions: the messages already
// pending in the store plus the new qualified ones, in windows of
// windowSize, each an extraction call and at most one judge call.
func (e *Estimate) Pending(ctx context.Context, st imprint.Store, scope imprint.Scope, sessions []string, windowSize int) error {
	if windowSize <= 0 {
		windowSize = 10
	}
	for _, sid := range sessions {
		q := e.newQualified[sid]
		count, tokens := q[0], q[1]
		if n, err := st.CountPending(ctx, scope, sid); err == nil {
			count += n
			if q[0] > 0 {
				tokens += n * (tokens / q[0])
			} else {
				tokens += n * 40
			}
		} else if !errors.Is(err, imprint.ErrNotFound) {
			return fmt.Errorf("dry run: %w", err)
		}
		if count == 0 {
			continue
		}
		windows := (count + windowSize - 1) / windowSize
		e.Calls += 2 * windows
		// Each window also shows up to half a window of background.
		e.Tokens += windows*(estExtractOverhead+estDedupPerWindow) + tokens + tokens/2
	}
	return nil
}
