package schedule_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver/riversqlite"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/sqlite"
)

// EnqueueListed compares the planner's clock (listedAt, time.Now() of the
// planning node) with the job's finalized_at, written from the clock of
// the node whose worker ran it. When that node's clock is ahead (an hour
// here), a session listed as pending well after its job ended must still
// get a job: a skip only within listedSkipWithin of the listing, so its
// pending messages never wait for the skew (found in review).
func TestListedAfterJobEndedOnFastClockNode(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := schedule.Config{Workers: 1, PollInterval: 5 * time.Millisecond, BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		ShutdownGrace: 5 * time.Second}
	e, err := schedule.NewRiver(ctx, riversqlite.New(db.WriterDB()), db, schedule.RiverConfig{Config: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetJobEngine(e); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 10)
	e.Handle(imprint.JobExtract, func(context.Context, imprint.Job) error { return nil })
	e.OnEvent(func(name string, _ imprint.Job, _ error) {
		if name == schedule.EventDone {
			done <- struct{}{}
		}
	})
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	j := imprint.Job{Kind: imprint.JobExtract, Scope: scope, SessionID: "s1"}
	first, err := e.Enqueue(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	res := make(chan error, 1)
	go func() { res <- e.Run(rctx) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("job did not run")
	}
	cancel()
	<-res
	// The node that ran the job had a clock an hour ahead of the planner's.
	var fin string
	if err := db.WriterDB().QueryRowContext(ctx, `SELECT finalized_at FROM river_job WHERE id = ?`, first.ID).Scan(&fin); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriterDB().ExecContext(ctx, `UPDATE river_job SET finalized_at = strftime('%Y-%m-%dT%H:%M:%fZ', finalized_at, '+1 hour') WHERE id = ?`, first.ID); err != nil {
		t.Fatal(err)
	}
	// Listed now, after the job ended: the session is still pending (new
	// messages came after the job's read), so a job is due.
	got, err := e.EnqueueListed(ctx, j, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got.ID == first.ID {
		t.Errorf("listing made after job %d ended (finalized_at %s, +1h skew) enqueued nothing: the session waits for the clock skew", first.ID, fin)
	}
}
