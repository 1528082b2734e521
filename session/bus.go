package session

import (
	"log/slog"
	"sync"

	imprint "github.com/imprint-dev/imprint"
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
	mu     sync.RWMutex
	nextID int
	subs   []subscription
	// Logger receives listener failures; nil logs nothing.
	Logger *slog.Logger
}

type subscription struct {
	id   int
	kind string
	fn   func(Event)
}

// NewBus returns an empty bus that logs listener failures to logger (nil
// logs nothing).
func NewBus(logger *slog.Logger) *Bus { return &Bus{Logger: logger} }

// Subscribe registers fn for events of kind (AnyKind for all) and returns a
// function that removes it; calling that function more than once is harmless.
func (b *Bus) Subscribe(kind string, fn func(Event)) (unsubscribe func()) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	b.subs = append(b.subs, subscription{id: id, kind: kind, fn: fn})
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
// returns.
func (b *Bus) Publish(e Event) {
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
			b.Logger.Error("session event listener failed", "kind", e.Kind, "episode_id", e.Episode.ID, "panic", r)
		}
	}()
	fn(e)
}
