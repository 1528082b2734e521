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

// Estimate accumulates what a real import would send to an LLM: Calls LLM
// calls with Tokens prompt tokens in all. The prompts are the ones capture
// and extraction build, counted with imprint.EstimateTokens; only what
// depends on an answer not known before the calls (the memories the
// conflict judge sees) is approximated. Real runs record the provider's
// usage.
type Estimate struct {
	// Capture is the capture runner's configuration (defaults filled in).
	Capture capture.Config
	// Background is extraction.max_background_messages.
	Background int
	Calls      int
	Tokens     int
	// newQualified holds, per session, the new messages that pass the
	// quality gate; people marks sessions between people.
	newQualified map[string][]imprint.Message
	people       map[string]bool
}

// Messages returns how many of tr's messages are not recorded yet and notes
// the qualified ones for the extraction estimate.
func (e *Estimate) Messages(ctx context.Context, st imprint.Store, scope imprint.Scope, tr importer.Transcript) (int, error) {
	if e.newQualified == nil {
		e.newQualified, e.people = map[string][]imprint.Message{}, map[string]bool{}
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
			if m.ID == "" {
				m.ID = estimatedMessageID
			}
			e.newQualified[tr.SessionID] = append(e.newQualified[tr.SessionID], m)
		}
	}
	e.people[tr.SessionID] = e.people[tr.SessionID] || tr.BetweenPeople
	return n, nil
}

// estimatedMessageID stands in, in a prompt, for the id a message gets when
// it is recorded (as long as one).
const estimatedMessageID = "0123456789abcdef0123456789abcdef"

// Episode adds the scoring calls capture would make for ep under the
// capture runner's configuration (capture.PlannedRequests): none for an
// abandoned episode that is not captured. Each call's tokens are those of
// its system prompt and user message.
func (e *Estimate) Episode(ep imprint.Episode) {
	steps := capture.Normalize(capture.ExtractSteps(ep), e.Capture)
	reqs, err := capture.PlannedRequests(ep, steps, e.Capture)
	if err != nil {
		return // a template that does not render fails the real run too
	}
	for _, r := range reqs {
		e.Calls++
		e.Tokens += requestTokens(r)
	}
}

// requestTokens estimates the prompt tokens of r.
func requestTokens(r imprint.LLMRequest) int {
	n := imprint.EstimateTokens(r.System)
	for _, m := range r.Messages {
		n += imprint.EstimateTokens(m.Content)
	}
	return n
}

// Pending adds the extraction windows of the sessions: the qualified
// messages already pending in the store, then the new ones, in windows of
// windowSize with their background, each one extraction call (the prompt
// extraction builds for it) and one conflict-judge call (its system prompt,
// with the window's text standing in for the memories and candidates it
// will see).
func (e *Estimate) Pending(ctx context.Context, st imprint.Store, scope imprint.Scope, sessions []string, windowSize int) error {
	if windowSize <= 0 {
		windowSize = 10
	}
	judge := imprint.EstimateTokens(extract.DedupSystemPrompt())
	for _, sid := range sessions {
		var qualified []imprint.Message
		if n, err := st.CountPending(ctx, scope, sid); err == nil && n > 0 {
			pending, err := st.PendingMessages(ctx, scope, sid, n)
			if err != nil {
				return fmt.Errorf("dry run: %w", err)
			}
			for _, m := range pending {
				if ok, _ := extract.ShouldExtract(m.Content); ok {
					qualified = append(qualified, m)
				}
			}
		} else if err != nil && !errors.Is(err, imprint.ErrNotFound) {
			return fmt.Errorf("dry run: %w", err)
		}
		qualified = append(qualified, e.newQualified[sid]...)
		system, user := extract.ExtractionSystemPrompt(), extract.ExtractionUserMessage
		if e.people[sid] {
			system, user = extract.ExtractionPeopleSystemPrompt(), extract.ExtractionPeopleUserMessage
		}
		for start := 0; start < len(qualified); start += windowSize {
			end := min(start+windowSize, len(qualified))
			newMsgs, background := extract.SplitWindow(qualified[:end], end-start, e.Background)
			text := user("", background, newMsgs)
			e.Calls += 2
			e.Tokens += imprint.EstimateTokens(system) + imprint.EstimateTokens(text) + judge + imprint.EstimateTokens(text)
		}
	}
	return nil
}
