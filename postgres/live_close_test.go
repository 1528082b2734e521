package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

// lockWaiters returns how many backends other than the caller's wait on a
// lock, and how many of them in a statement starting with prefix.
func lockWaiters(t *testing.T, db *DB, prefix string) (all, in int) {
	t.Helper()
	if err := db.Pool().QueryRow(t.Context(), `SELECT count(*), count(*) FILTER (WHERE left(ltrim(query), length($1)) = $1)
		FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND state = 'active' AND pid <> pg_backend_pid()`,
		prefix).Scan(&all, &in); err != nil {
		t.Fatal(err)
	}
	return all, in
}

// TestAppendDuringCloseKeepsTurns: a live post (AppendTurns) that comes
// while another node's (or the idle closer's) CloseEpisode holds the
// session's open episode loses nothing: its turns end up in the closed
// episode's transcript or in a new open episode. Before the close locked
// the session first, the append's turn rows went into the episode just
// closed (whose rows are never read again), AppendTurns reported success,
// and the turn was in no episode. The test steps by the server's lock
// waits (pg_stat_activity), not by time.
func TestAppendDuringCloseKeepsTurns(t *testing.T) {
	db := openTemp(t)
	ctx := t.Context()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	first, err := db.AppendTurns(ctx, scope, "s", []imprint.Turn{{ID: "u1", Role: imprint.RoleUser, Content: "first", TS: imprint.Now()}}, "ep-1")
	if err != nil {
		t.Fatal(err)
	}
	job := imprint.Job{Kind: imprint.JobCapture, Scope: scope, SessionID: "s", EpisodeID: first.ID,
		UniqueKey: imprint.CaptureJobKey(scope, first.ID)}

	// Another transaction holds, uncommitted, the capture job's unique
	// key: CloseEpisode, once it holds the episode's row, waits there, so
	// the append below runs inside CloseEpisode's transaction window.
	hold, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback(context.Background()) }()
	if _, _, err := db.enqueueTx(ctx, hold, job, imprint.Now()); err != nil {
		t.Fatal(err)
	}

	closed := make(chan error, 1)
	go func() {
		_, err := db.CloseEpisode(ctx, scope, first.ID, imprint.ClosedFinalized, &job)
		closed <- err
	}()
	for {
		if _, n := lockWaiters(t, db, "INSERT INTO jobs"); n > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
	}

	type appendResult struct {
		ep  imprint.Episode
		err error
	}
	appended := make(chan appendResult, 1)
	go func() {
		ep, err := db.AppendTurns(ctx, scope, "s", []imprint.Turn{{ID: "u2", Role: imprint.RoleUser, Content: "second", TS: imprint.Now()}}, "ep-2")
		appended <- appendResult{ep, err}
	}()
	// The append either finishes on its own or waits behind the close.
	var res appendResult
	waited := false
	for !waited {
		select {
		case res = <-appended:
			waited = true
		default:
			if all, _ := lockWaiters(t, db, ""); all > 1 {
				waited = true
			}
		}
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
	}
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	if res.ep.ID == "" && res.err == nil {
		res = <-appended
	}
	if res.err != nil {
		// Refusing the post is acceptable: the client knows and retries.
		t.Logf("append during close: %v", res.err)
		return
	}
	// The append said it stored u2: it must be in an episode.
	var where []string
	got, err := db.GetEpisode(ctx, scope, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range got.Turns {
		if tr.ID == "u2" {
			where = append(where, "closed "+got.ID)
		}
	}
	open, err := db.OpenEpisode(ctx, scope, "s")
	switch {
	case err == nil:
		for _, tr := range open.Turns {
			if tr.ID == "u2" {
				where = append(where, "open "+open.ID)
			}
		}
	case !errors.Is(err, imprint.ErrNotFound):
		t.Fatal(err)
	}
	if len(where) == 0 {
		var rows int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM episode_turns WHERE episode_id = $1`, first.ID).Scan(&rows); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		t.Fatalf("AppendTurns returned episode %s (%s, %d turns) with no error, but turn u2 is in no episode: closed %s holds %d turns, "+
			"%d turn rows are left on the closed episode", res.ep.ID, res.ep.Status, res.ep.TurnCount, got.ID, len(got.Turns), rows)
	}
}
