package imprint

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// NopPublisher and a nil publisher given to PublisherOr drop events;
// PublisherOr keeps a publisher given.
func TestPublisherOr(t *testing.T) {
	t.Parallel()
	var got []string
	rec := PublisherFunc(func(_ context.Context, e Event) { got = append(got, e.Type+":"+e.Scope.User) })
	PublisherOr(rec).Publish(t.Context(), Event{Type: EventCaptureDone, Scope: Scope{Tenant: "t", User: "ana", Agent: "x"}})
	NopPublisher.Publish(t.Context(), Event{Type: EventCaptureDone})
	PublisherOr(nil).Publish(t.Context(), Event{Type: EventCaptureDone})
	if want := []string{"capture.done:ana"}; !slices.Equal(got, want) {
		t.Errorf("deliveries %v, want %v", got, want)
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
