package ingest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/session"
	"github.com/imprint-dev/imprint/sqlite"
)

// ana is the scope the tests work in; bob is another one.
var (
	ana = imprint.Scope{Tenant: "acme", User: "ana", Agent: "support"}
	bob = imprint.Scope{Tenant: "acme", User: "bob", Agent: "support"}
)

// openDB opens a real SQLite store in a temporary folder.
func openDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// tauTranscripts reads the τ-bench airline trajectories of testdata/.
func tauTranscripts(t *testing.T) []importer.Transcript {
	t.Helper()
	f, err := os.Open(testfiles.Path(t, "tau-bench/airline-40.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	trs, err := importer.ReadTauBench(f, "airline-40.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) < 3 {
		t.Fatalf("%d τ-bench transcripts, want several", len(trs))
	}
	return trs
}

// closeEpisode posts the turns of a τ-bench episode to a live session of
// scope and closes it as closedBy, as imprint serve does: the stored
// episode gets its capture job. It returns the closed episode and that
// job.
func closeEpisode(t *testing.T, db *sqlite.DB, scope imprint.Scope, sessionID string, turns []imprint.Turn, closedBy imprint.ClosedBy) (imprint.Episode, imprint.Job) {
	t.Helper()
	mgr := session.NewManager(session.ManagerDeps{Store: db}, session.ManagerConfig{})
	if _, err := mgr.AppendTurns(t.Context(), scope, sessionID, turns); err != nil {
		t.Fatal(err)
	}
	ep, err := mgr.Finalize(t.Context(), scope, sessionID, closedBy)
	if err != nil {
		t.Fatal(err)
	}
	return ep, imprint.Job{Kind: imprint.JobCapture, Scope: ep.Scope, SessionID: ep.SessionID, EpisodeID: ep.ID,
		UniqueKey: imprint.CaptureJobKey(ep.Scope, ep.ID)}
}

// eventLog records the events published to it, as "type scope".
type eventLog struct {
	mu  sync.Mutex
	evs []imprint.Event
}

func (l *eventLog) Publish(_ context.Context, e imprint.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, e)
}

// types returns "type scope" of each event, in order.
func (l *eventLog) types() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.evs))
	for i, e := range l.evs {
		out[i] = e.Type + " " + e.Scope.String()
	}
	return out
}
