package capture

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

// Every capture event is published with the scope of the episode it is
// about, so that a stream shows it to that scope only; an episode given
// no scope is captured, and announced, in the default scope.
func TestCaptureEventsCarryTheEpisodeScope(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	var mu sync.Mutex
	var got []string
	events := imprint.PublisherFunc(func(_ context.Context, e imprint.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.Type+" "+e.Scope.String()+" "+e.Payload.(Event).EpisodeID)
	})
	r := NewRunner(Deps{Store: db, Events: events}, DefaultConfig())
	ana := imprint.Scope{Tenant: "acme", User: "ana", Agent: "coder"}
	ep := episode(U("q", 0), A("a", 10))
	ep.Scope = ana
	if _, err := r.Run(t.Context(), ep, ""); err != nil {
		t.Fatal(err)
	}
	plain := episode(U("q", 0), A("a", 10))
	plain.ID = "ep-2"
	if _, err := r.Run(t.Context(), plain, ""); err != nil {
		t.Fatal(err)
	}
	def := imprint.DefaultScope().String()
	want := []string{
		"capture.started " + ana.String() + " ep-1", "capture.done " + ana.String() + " ep-1",
		"capture.started " + def + " ep-2", "capture.done " + def + " ep-2",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
