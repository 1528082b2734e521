package session

import (
	"log/slog"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/eventbus"
)

// Kinds of session events.
const (
	// EventEpisodeFinalized is published for every episode that closes,
	// whatever ClosedBy says.
	EventEpisodeFinalized = "episode.finalized"
	// EventEpisodeAbandoned is published after EventEpisodeFinalized for an
	// episode closed as abandoned. It is informational: consumers that
	// handle closed episodes listen for EventEpisodeFinalized only, so an
	// abandoned episode is never handled twice.
	EventEpisodeAbandoned = "episode.abandoned"
	// EventEpisodeStarted is published when an episode opens.
	EventEpisodeStarted = "episode.started"
	// AnyKind subscribes to every kind.
	AnyKind = "*"
)

// Event is one announcement on the session bus.
type Event struct {
	Kind     string
	Episode  imprint.Episode
	ClosedBy imprint.ClosedBy
}

// Bus delivers session events to subscribers, synchronously, in
// subscription order (subscribers of the kind first, then those of
// AnyKind). A subscriber that panics is logged and skipped; the others
// still receive the event. The zero Bus is ready to use and safe for
// concurrent use.
type Bus struct {
	core eventbus.Bus[Event]
	// Logger receives listener failures; nil logs nothing.
	Logger *slog.Logger
}

// NewBus returns an empty bus that logs listener failures to logger (nil
// logs nothing).
func NewBus(logger *slog.Logger) *Bus { return &Bus{Logger: logger} }

// Subscribe registers fn for events of kind (AnyKind for all) and returns a
// function that removes it; calling that function more than once is harmless.
func (b *Bus) Subscribe(kind string, fn func(Event)) (unsubscribe func()) {
	return b.core.Subscribe(kind, fn)
}

// Publish delivers e to the subscribers of e.Kind and of AnyKind before it
// returns.
func (b *Bus) Publish(e Event) {
	b.core.Publish(e.Kind, AnyKind, e, func(r any) {
		if b.Logger != nil {
			b.Logger.Error("session event listener failed", "kind", e.Kind, "episode_id", e.Episode.ID, "panic", r)
		}
	})
}

// SubscriberCount returns how many subscribers receive events of kind
// (those of the kind plus those of AnyKind); kind "" counts all.
func (b *Bus) SubscriberCount(kind string) int { return b.core.SubscriberCount(kind, AnyKind) }
