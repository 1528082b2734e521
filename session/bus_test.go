package session

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

func TestBus(t *testing.T) {
	t.Parallel()
	var b Bus
	var got []string
	unsub := b.Subscribe(EventEpisodeFinalized, func(e Event) { got = append(got, "finalized:"+e.Episode.ID+":"+string(e.ClosedBy)) })
	b.Subscribe(EventEpisodeFinalized, func(Event) { panic("listener bug") })
	b.Subscribe(AnyKind, func(e Event) { got = append(got, "any:"+e.Kind) })
	b.Publish(Event{Kind: EventEpisodeFinalized, Episode: imprint.Episode{ID: "e1"}, ClosedBy: imprint.ClosedAbandoned})
	b.Publish(Event{Kind: EventEpisodeAbandoned, Episode: imprint.Episode{ID: "e1"}})
	unsub()
	unsub()
	b.Publish(Event{Kind: EventEpisodeFinalized, Episode: imprint.Episode{ID: "e2"}})
	want := []string{"finalized:e1:abandoned", "any:episode.finalized", "any:episode.abandoned", "any:episode.finalized"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if n := b.SubscriberCount(EventEpisodeFinalized); n != 2 {
		t.Errorf("SubscriberCount = %d, want 2", n)
	}
}
