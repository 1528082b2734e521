package capture

import (
	"context"
	"encoding/json"

	imprint "github.com/imprint-dev/imprint"
)

// Kinds of capture events, the imprint.Event types a Runner publishes.
const (
	// EventStarted is published before the first stage of a run.
	EventStarted = imprint.EventCaptureStarted
	// EventDone is published after the traces are saved, or when an
	// abandoned episode is skipped (capture.capture_abandoned off).
	EventDone = imprint.EventCaptureDone
	// EventFailed is published when saving failed; Run then returns the error.
	EventFailed = imprint.EventCaptureFailed
)

// Event is the payload of a capture event (imprint.Event of type Kind,
// published with the episode's scope). Its JSON is what the event stream
// sends: {episode_id, session_id} for capture.started, {result} for
// capture.done, {episode_id, session_id, stage, error: {code, message}} for
// capture.failed.
type Event struct {
	Kind      string
	EpisodeID string
	SessionID string
	// Result is set on capture.done.
	Result *Result
	// Stage and Err are set on capture.failed.
	Stage string
	Err   error
}

// MarshalJSON writes the event's payload.
func (e Event) MarshalJSON() ([]byte, error) {
	switch e.Kind {
	case EventDone:
		return json.Marshal(struct {
			Result *Result `json:"result"`
		}{e.Result})
	case EventFailed:
		type errBody struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		var eb errBody
		if e.Err != nil {
			eb = errBody{Code: imprint.ErrorCode(e.Err), Message: e.Err.Error()}
		}
		return json.Marshal(struct {
			EpisodeID string  `json:"episode_id"`
			SessionID string  `json:"session_id"`
			Stage     string  `json:"stage"`
			Error     errBody `json:"error"`
		}{e.EpisodeID, e.SessionID, e.Stage, eb})
	default:
		return json.Marshal(struct {
			EpisodeID string `json:"episode_id"`
			SessionID string `json:"session_id"`
		}{e.EpisodeID, e.SessionID})
	}
}

// EventCounts reports the traces a capture.done wrote.
func (e Event) EventCounts() imprint.EventCounts {
	if e.Kind != EventDone || e.Result == nil {
		return imprint.EventCounts{}
	}
	return imprint.EventCounts{Traces: len(e.Result.TraceIDs)}
}

// publish announces e with the scope of the episode it is about.
func (r *Runner) publish(ctx context.Context, scope imprint.Scope, e Event) {
	r.events.Publish(ctx, imprint.Event{Type: e.Kind, Scope: scope, Payload: e})
}
