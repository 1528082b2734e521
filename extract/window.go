package extract

import (
	"context"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

// SplitWindow is the seed's split of a list of qualified messages: the last
// maxNew messages are new (the ones memories are extracted from) and up to
// maxBackground messages immediately before them are background (context
// only). Both keep the input order and share its array. NextWindow and
// the batched planning of ExtractSessions split every window with it.
func SplitWindow(qualified []imprint.Message, maxNew, maxBackground int) (newMsgs, background []imprint.Message) {
	maxNew, maxBackground = max(maxNew, 0), max(maxBackground, 0)
	start := max(len(qualified)-maxNew, 0)
	bgStart := max(start-maxBackground, 0)
	return qualified[start:], qualified[bgStart:start]
}

// Rejection names a message the quality gate kept from the model.
type Rejection struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Window is one extraction window over a session's pending messages.
type Window struct {
	// New are the qualified pending messages memories are extracted from.
	New []imprint.Message
	// Background are up to MaxBackgroundMessages qualified messages right
	// before the window, already extracted or not; context only.
	Background []imprint.Message
	// Consumed are all pending messages the window uses up, in order:
	// New plus the gate-rejected messages among them.
	Consumed []imprint.Message
	// Rejected lists the consumed messages the gate rejected.
	Rejected []Rejection
}

// LastSeq returns the Seq of the window's last consumed message, where the
// session's cursor moves when the window succeeds; 0 for an empty window.
func (w Window) LastSeq() int64 {
	if len(w.Consumed) == 0 {
		return 0
	}
	return w.Consumed[len(w.Consumed)-1].Seq
}

// MessageIDs returns the ids of the consumed messages.
func (w Window) MessageIDs() []string {
	ids := make([]string, len(w.Consumed))
	for i, m := range w.Consumed {
		ids[i] = m.ID
	}
	return ids
}

// planWindow cuts the next window out of pending (oldest first). complete
// says pending holds every pending message. A window ends at its maxNew-th
// qualified message, except that rejected messages after the last pending
// qualified one go with it. needMore is true when that cannot be decided
// from a partial list.
func planWindow(pending []imprint.Message, maxNew int, complete bool) (consumed []imprint.Message, rejected []Rejection, needMore bool) {
	return gateMemo{}.plan(pending, maxNew, complete)
}

// gateVerdict is ShouldExtract's answer for one message.
type gateVerdict struct {
	ok     bool
	reason string
}

// gateMemo remembers ShouldExtract's verdicts by message seq within one
// NextWindow call, so no message goes through the gate twice (the gate's
// patterns dominate the cost of planning a window).
type gateMemo map[int64]gateVerdict

func (g gateMemo) check(m imprint.Message) (bool, string) {
	if v, ok := g[m.Seq]; ok && m.Seq != 0 {
		return v.ok, v.reason
	}
	ok, reason := ShouldExtract(m.Content)
	if m.Seq != 0 {
		g[m.Seq] = gateVerdict{ok, reason}
	}
	return ok, reason
}

// qualified returns the messages of msgs that pass the gate, in order.
func (g gateMemo) qualified(msgs []imprint.Message) []imprint.Message {
	var out []imprint.Message
	for _, m := range msgs {
		if ok, _ := g.check(m); ok {
			out = append(out, m)
		}
	}
	return out
}

func (g gateMemo) plan(pending []imprint.Message, maxNew int, complete bool) ([]imprint.Message, []Rejection, bool) {
	qualified := 0
	end := -1
	for i, m := range pending {
		if ok, _ := g.check(m); !ok {
			continue
		}
		if qualified == maxNew {
			// A later qualified message exists: the window ends at end.
			return g.cut(pending[:end+1])
		}
		qualified++
		end = i
	}
	if !complete {
		return nil, nil, true
	}
	return g.cut(pending)
}

func (g gateMemo) cut(msgs []imprint.Message) ([]imprint.Message, []Rejection, bool) {
	var rej []Rejection
	for _, m := range msgs {
		if ok, reason := g.check(m); !ok {
			rej = append(rej, Rejection{ID: m.ID, Reason: reason})
		}
	}
	return msgs, rej, false
}

// NextWindow reads the session's next extraction window from the store:
// up to maxNew qualified pending messages, oldest first, the gate-rejected
// pending messages that fall among them, and up to maxBackground qualified
// messages before it. An empty window means nothing is pending.
func NextWindow(ctx context.Context, ms imprint.MessageStore, scope imprint.Scope, sessionID string, maxNew, maxBackground int) (Window, error) {
	if maxNew < 1 {
		maxNew = 1
	}
	var w Window
	gate := gateMemo{}
	// One qualified message past maxNew decides where the window ends;
	// the first read allows for a few rejected ones and grows if needed.
	for limit := maxNew + maxNew/2 + 4; ; limit *= 2 {
		pending, err := ms.PendingMessages(ctx, scope, sessionID, limit)
		if err != nil {
			return Window{}, fmt.Errorf("read pending messages: %w", err)
		}
		consumed, rejected, needMore := gate.plan(pending, maxNew, len(pending) < limit)
		if !needMore {
			w.Consumed, w.Rejected = consumed, rejected
			break
		}
	}
	w.New = gate.qualified(w.Consumed)
	if len(w.Consumed) == 0 || maxBackground <= 0 {
		return w, nil
	}
	bg, err := backgroundBefore(ctx, ms, gate, scope, sessionID, w.Consumed[0].Seq, maxBackground)
	if err != nil {
		return Window{}, err
	}
	_, w.Background = SplitWindow(append(bg, w.New...), len(w.New), maxBackground)
	return w, nil
}

// backgroundBefore returns up to n qualified messages right before seq.
func backgroundBefore(ctx context.Context, ms imprint.MessageStore, gate gateMemo, scope imprint.Scope, sessionID string, seq int64, n int) ([]imprint.Message, error) {
	const maxScan = 4096
	for limit := n + n/2 + 2; ; limit *= 2 {
		before, err := ms.MessagesBefore(ctx, scope, sessionID, seq, limit)
		if err != nil {
			return nil, fmt.Errorf("read background messages: %w", err)
		}
		q := gate.qualified(before)
		if len(q) >= n || len(before) < limit || limit >= maxScan {
			return q[max(len(q)-n, 0):], nil
		}
	}
}

// Workspace is the workspace of the window's messages: the first one
// naming one ("" for none).
func (w Window) Workspace() string {
	for _, ms := range [][]imprint.Message{w.New, w.Consumed} {
		for _, m := range ms {
			if m.Workspace != "" {
				return m.Workspace
			}
		}
	}
	return ""
}
