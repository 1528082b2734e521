package imprint

import (
	"context"
	"encoding/json"
)

// Types of the events the pipelines publish. The names are those of the
// event stream (docs/CONTRACTS.md §7).
const (
	// EventCaptureStarted is published before the first stage of a
	// capture; its payload's JSON is {episode_id, session_id}.
	EventCaptureStarted = "capture.started"
	// EventCaptureDone is published after a capture's traces are saved;
	// its payload's JSON is {result}.
	EventCaptureDone = "capture.done"
	// EventCaptureFailed is published when a capture failed; its
	// payload's JSON is {episode_id, session_id, stage, error: {code,
	// message}}.
	EventCaptureFailed = "capture.failed"
	// EventExtractionDone is published for each extraction window that
	// succeeded; its payload is the window's result.
	EventExtractionDone = "extraction.done"
	// EventExtractionFailed is published for each extraction window that
	// failed (not one an LLM budget made wait).
	EventExtractionFailed = "extraction.failed"
	// EventEpisodeStarted is published when an episode opens; its payload
	// is an EpisodeEvent.
	EventEpisodeStarted = "episode.started"
	// EventEpisodeFinalized is published for every episode that closes,
	// whatever it was closed by; its payload is an EpisodeEvent.
	EventEpisodeFinalized = "episode.finalized"
	// EventEpisodeAbandoned is published after EventEpisodeFinalized for
	// an episode closed as abandoned. It is informational: consumers of
	// closed episodes handle EventEpisodeFinalized only, so that an
	// abandoned episode is never handled twice.
	EventEpisodeAbandoned = "episode.abandoned"
)

// Event is one announcement of a pipeline: what happened (Type), whose it
// is (Scope) and its data (Payload, whose JSON is what an event stream
// sends). An event is always published with its scope; a consumer that
// shows events to someone shows only those of their scope.
type Event struct {
	Type    string
	Scope   Scope
	Payload any
}

// Publisher receives events. Publish must be safe for concurrent use and
// must not block for long: it runs on the publisher's path.
type Publisher interface {
	Publish(ctx context.Context, e Event)
}

// PublisherFunc is a function used as a Publisher.
type PublisherFunc func(ctx context.Context, e Event)

// Publish calls f.
func (f PublisherFunc) Publish(ctx context.Context, e Event) { f(ctx, e) }

// NopPublisher drops every event; it is the publisher of a pipeline given
// none.
var NopPublisher Publisher = PublisherFunc(func(context.Context, Event) {})

// PublisherOr returns p, or NopPublisher when p is nil.
func PublisherOr(p Publisher) Publisher {
	if p == nil {
		return NopPublisher
	}
	return p
}

// EventCounts is what an event reports for the service's counters
// (/metrics): traces written, and decisions on extracted memories.
type EventCounts struct {
	Traces                           int
	Stored, Updated, Merged, Skipped int
}

// EventCounter is implemented by payloads that report counts.
type EventCounter interface {
	EventCounts() EventCounts
}

// EpisodeEvent is the payload of the episode events: the episode and what
// closed it (empty for EventEpisodeStarted).
type EpisodeEvent struct {
	Episode  Episode
	ClosedBy ClosedBy
}

// MarshalJSON writes what an event stream sends for an episode event:
// {"episode_id", "session_id", "status", "closed_by", "turns"}.
func (e EpisodeEvent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		EpisodeID string `json:"episode_id"`
		SessionID string `json:"session_id"`
		Status    string `json:"status"`
		ClosedBy  string `json:"closed_by"`
		Turns     int    `json:"turns"`
	}{e.Episode.ID, e.Episode.SessionID, string(e.Episode.Status), string(e.ClosedBy), len(e.Episode.Turns)})
}
