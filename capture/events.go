package capture

import (
	"encoding/json"
	"log/slog"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/eventbus"
)

// Kinds of capture events.
const (
	// EventStarted is published before the first stage of a run.
	EventStarted = "capture.started"
	// EventDone is published after the traces are saved.
	EventDone = "capture.done"
	// EventFailed is published when saving failed; Run then returns the error.
	EventFailed = "capture.failed"
	// AnyKind subscribes to every kind.
	AnyKind = "*"
)

// Event is one announcement on the capture bus. Its JSON is the event's
// payload: {episode_id, session_id} for capture.started, {result} for
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

// Bus delivers capture events to subscribers, synchronously, in
// subscription order (subscribers of the kind first, then those of
// AnyKind). A subscriber that panics is logged and skipped. The zero Bus is
// ready to use and safe for concurrent use.
type Bus struct {
	core eventbus.Bus[Event]
	// Logger receives listener failures; nil logs nothing.
	Logger *slog.Logger
}

// NewBus returns an empty capture bus that logs listener failures to logger
// (nil logs nothing).
func NewBus(logger *slog.Logger) *Bus { return &Bus{Logger: logger} }

// Subscribe registers fn for events of kind (AnyKind for all) and returns a
// function that removes it; calling it again is harmless.
func (b *Bus) Subscribe(kind string, fn func(Event)) (unsubscribe func()) {
	return b.core.Subscribe(kind, fn)
}

// Publish delivers e to the subscribers of e.Kind and of AnyKind before it
// returns. A nil Bus drops the event.
func (b *Bus) Publish(e Event) {
	if b == nil {
		return
	}
	b.core.Publish(e.Kind, AnyKind, e, func(r any) {
		if b.Logger != nil {
			b.Logger.Error("capture event listener failed", "channel", chanCapture, "kind", e.Kind, "episode_id", e.EpisodeID, "panic", r)
		}
	})
}

// SubscriberCount returns how many subscribers receive events of kind
// (those of the kind plus those of AnyKind); kind "" counts all.
func (b *Bus) SubscriberCount(kind string) int { return b.core.SubscriberCount(kind, AnyKind) }
