package session_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/session"
)

// The manager publishes each episode event with the episode's scope and
// the episode as payload, so that a stream shows it to that scope only.
func TestEpisodeEventsCarryTheEpisodeScope(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var mu sync.Mutex
	var got []string
	events := imprint.PublisherFunc(func(_ context.Context, e imprint.Event) {
		p := e.Payload.(imprint.EpisodeEvent)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.Type+" "+e.Scope.String()+" "+p.Episode.SessionID+" "+string(p.ClosedBy))
	})
	m := session.NewManager(session.ManagerDeps{Store: f.db, Events: events}, session.ManagerConfig{})
	bob := imprint.Scope{Tenant: "acme", User: "bob", Agent: "claude"}
	for _, sc := range []imprint.Scope{scope, bob} {
		if _, err := m.AppendTurns(t.Context(), sc, "s1", sampleTurns()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Finalize(t.Context(), bob, "s1", imprint.ClosedAbandoned); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"episode.started " + scope.String() + " s1 ",
		"episode.started " + bob.String() + " s1 ",
		"episode.finalized " + bob.String() + " s1 abandoned",
		"episode.abandoned " + bob.String() + " s1 abandoned",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
