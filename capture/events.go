package capture

import (
	"encoding/json"
	"log/slog"
	"sync"

	imprint "github.com/imprint-dev/imprint"
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
	mu     sync.RWMutex
	nextID int
	subs   []busSub
	// Logger receives listener failures; nil logs nothing.
	Logger *slog.Logger
}

type busSub struct {
	id   int
	kind string
	fn   func(Event)
}

// NewBus returns an empty capture bus that logs listener failures to logger
// (nil logs nothing).
func NewBus(logger *slog.Logger) *Bus { return &Bus{Logger: logger} }

// Subscribe registers fn for events of kind (AnyKind for all) and returns a
// function that removes it; calling it again is harmless.
func (b *Bus) Subscribe(kind string, fn func(Event)) (unsubscribe func()) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	b.subs = append(b.subs, busSub{id: id, kind: kind, fn: fn})
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			for i, s := range b.subs {
				if s.id == id {
					b.subs = append(b.subs[:i:i], b.subs[i+1:]...)
					return
				}
			}
		})
	}
}

// Publish delivers e to the subscribers of e.Kind and of AnyKind before it
// returns. A nil Bus drops the event.
func (b *Bus) Publish(e Event) {
	if b == nil {
		return
	}
	b.mu.RLock()
	var targeted, wildcard []func(Event)
	for _, s := range b.subs {
		switch s.kind {
		case e.Kind:
			targeted = append(targeted, s.fn)
		case AnyKind:
			wildcard = append(wildcard, s.fn)
		}
	}
	b.mu.RUnlock()
	for _, fn := range append(targeted, wildcard...) {
		b.deliver(fn, e)
	}
}

// SubscriberCount returns how many subscribers receive events of kind
// (those of the kind plus those of AnyKind); kind "" counts all.
func (b *Bus) SubscriberCount(kind string) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for _, s := range b.subs {
		if kind == "" || s.kind == kind || s.kind == AnyKind {
			n++
		}
	}
	return n
}

func (b *Bus) deliver(fn func(Event), e Event) {
	defer func() {
		if r := recover(); r != nil && b.Logger != nil {
			b.Logger.Error("capture event listener failed", "channel", chanCapture, "kind", e.Kind, "episode_id", e.EpisodeID, "panic", r)
		}
	}()
	fn(e)
}
