package imprint

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// Publishers hands each event to every publisher given, in order,
// skipping nil ones; NopPublisher and a nil one given to PublisherOr drop
// events.
func TestPublishers(t *testing.T) {
	t.Parallel()
	var got []string
	rec := func(name string) Publisher {
		return PublisherFunc(func(_ context.Context, e Event) { got = append(got, name+":"+e.Type+":"+e.Scope.User) })
	}
	p := Publishers(rec("a"), nil, rec("b"))
	p.Publish(t.Context(), Event{Type: EventCaptureDone, Scope: Scope{Tenant: "t", User: "ana", Agent: "x"}})
	p.Publish(t.Context(), Event{Type: EventEpisodeFinalized, Scope: Scope{Tenant: "t", User: "bob", Agent: "x"}})
	want := []string{"a:capture.done:ana", "b:capture.done:ana", "a:episode.finalized:bob", "b:episode.finalized:bob"}
	if !slices.Equal(got, want) {
		t.Errorf("deliveries %v, want %v", got, want)
	}
	NopPublisher.Publish(t.Context(), Event{Type: EventCaptureDone})
	PublisherOr(nil).Publish(t.Context(), Event{Type: EventCaptureDone})
	Publishers().Publish(t.Context(), Event{Type: EventCaptureDone})
	if len(got) != len(want) {
		t.Errorf("a publisher of nothing delivered: %v", got)
	}
}

// The JSON of an episode event is what the event stream sends for
// episode.finalized (docs/CONTRACTS.md: episode_id, session_id, status,
// closed_by, turns), closed_by being the event's.
func TestEpisodeEventJSON(t *testing.T) {
	t.Parallel()
	ep := Episode{ID: "ep-1", SessionID: "s1", Status: EpisodeAbandoned, ClosedBy: ClosedFinalized,
		Turns: []Turn{{Role: RoleUser, Content: "q"}, {Role: RoleAssistant, Content: "a"}}}
	b, err := json.Marshal(EpisodeEvent{Episode: ep, ClosedBy: ClosedAbandoned})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"episode_id":"ep-1","session_id":"s1","status":"abandoned","closed_by":"abandoned","turns":2}`
	if string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
}
