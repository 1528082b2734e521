package ingest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
)

// A capture job announces its capture once, through the capture runner's
// events, with the episode's scope: capture.started then capture.done
// carrying the traces it saved. The handler's own events (set here to the
// same log) add nothing, so a stream shows each capture once. An abandoned
// episode skipped by capture.capture_abandoned off is announced as done
// too, so a live badge that showed it capturing moves on.
func TestCaptureJobAnnouncesTheCaptureOnce(t *testing.T) {
	t.Parallel()
	trs := tauTranscripts(t)
	for _, tt := range []struct {
		name     string
		closedBy imprint.ClosedBy
		traces   bool
	}{
		{"finalized", imprint.ClosedFinalized, true},
		{"abandoned, not captured", imprint.ClosedAbandoned, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := openDB(t)
			events := &eventLog{}
			cfg := capture.DefaultConfig()
			cfg.CaptureAbandoned = false
			w := &Workers{Store: db, Capture: capture.NewRunner(capture.Deps{Store: db, Events: events}, cfg), Events: events}
			ep, job := closeEpisode(t, db, ana, trs[0].SessionID, trs[0].Episodes[0].Turns, tt.closedBy)
			if err := w.CaptureJob(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			want := []string{capture.EventStarted + " " + ana.String(), capture.EventDone + " " + ana.String()}
			if diff := cmp.Diff(want, events.types()); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			done := events.evs[1].Payload.(capture.Event)
			stored, err := db.ListTraces(t.Context(), ana, imprint.TraceFilter{EpisodeID: ep.ID})
			if err != nil {
				t.Fatal(err)
			}
			if done.EpisodeID != ep.ID || done.Result == nil || len(done.Result.TraceIDs) != len(stored) || (len(stored) > 0) != tt.traces {
				t.Errorf("capture.done of %s with %+v; %d traces stored", done.EpisodeID, done.Result, len(stored))
			}
		})
	}
}
