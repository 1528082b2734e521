package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/pgtest"
)

// TestPendingCounts checks that the status page's one-statement count is
// CountPending of every session of the scope, and counts nothing of
// another scope.
func TestPendingCounts(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	other := imprint.Scope{Tenant: "t", User: "v", Agent: "a"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	add := func(sc imprint.Scope, sid string, n int) {
		var msgs []imprint.Message
		for i := range n {
			msgs = append(msgs, imprint.Message{ID: fmt.Sprintf("%s-%d", sid, i), SessionID: sid, Scope: sc,
				Role: imprint.RoleUser, Content: fmt.Sprintf("message %d of %s", i, sid), Timestamp: imprint.At(at.Add(time.Duration(i) * time.Second))})
		}
		if _, err := db.AppendMessages(ctx, sc, sid, msgs); err != nil {
			t.Fatal(err)
		}
	}
	add(scope, "s1", 5)
	add(scope, "s2", 3)
	add(scope, "s3", 1)
	add(other, "s1", 4)
	pend, err := db.PendingMessages(ctx, scope, "s1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AdvanceCursor(ctx, scope, "s1", pend[1].Seq, "", at); err != nil {
		t.Fatal(err)
	}
	pend, err = db.PendingMessages(ctx, scope, "s3", 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AdvanceCursor(ctx, scope, "s3", pend[0].Seq, "", at); err != nil {
		t.Fatal(err)
	}
	got, err := db.PendingCounts(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, sid := range []string{"s1", "s2", "s3"} {
		n, err := db.CountPending(ctx, scope, sid)
		if err != nil {
			t.Fatal(err)
		}
		want[sid] = n
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || want["s1"] != 3 || want["s2"] != 3 || want["s3"] != 0 {
		t.Fatalf("PendingCounts = %v, CountPending of each = %v (want s1 3, s2 3, s3 0)", got, want)
	}
}

// TestAdvanceCursorsBesideRecording moves the cursors of many sessions
// together while the same sessions are recorded together, over and over:
// both lock the sessions' rows in the same order, so neither ever fails
// with a deadlock (the sessions are created in the reverse of that order,
// so a statement locking them as it finds them would).
func TestAdvanceCursorsBesideRecording(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	const n = 24
	var sids []string
	for i := n - 1; i >= 0; i-- {
		sid := fmt.Sprintf("s%02d", i)
		sids = append(sids, sid)
		if _, err := db.AppendMessages(ctx, scope, sid, []imprint.Message{{ID: sid + "-0", Role: imprint.RoleUser, Content: "hello " + sid}}); err != nil {
			t.Fatal(err)
		}
	}
	const rounds = 150
	errs := make(chan error, 2)
	go func() {
		for r := 1; r <= rounds; r++ {
			var bs []imprint.MessageBatch
			for _, sid := range sids {
				bs = append(bs, imprint.MessageBatch{Scope: scope, SessionID: sid, Messages: []imprint.Message{
					{ID: fmt.Sprintf("%s-%d", sid, r), Role: imprint.RoleUser, Content: fmt.Sprintf("message %d of %s", r, sid)}}})
			}
			if _, err := db.AppendMessageBatches(ctx, bs); err != nil {
				errs <- fmt.Errorf("record round %d: %w", r, err)
				return
			}
		}
		errs <- nil
	}()
	go func() {
		for r := 1; r <= rounds; r++ {
			var moves []imprint.CursorMove
			for _, sid := range sids {
				moves = append(moves, imprint.CursorMove{SessionID: sid, ToSeq: int64(r), LastScene: "x", At: time.Now()})
			}
			if err := db.AdvanceCursors(ctx, scope, moves); err != nil {
				errs <- fmt.Errorf("cursors round %d: %w", r, err)
				return
			}
		}
		errs <- nil
	}()
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestAdvanceCursorsReadScopeOnce checks that moving the cursors of a few
// sessions reads the scope's sessions a bounded number of times, not once
// per session of the scope: a table no ANALYZE has seen yet (a first
// import into a new database, before autovacuum's first pass) makes every
// scope column look selective, and a plan that ran the all-present guard
// again for each row of the scope read n² rows. In the 10× import it took
// 50–100 ms per call at 460 sessions and a third of the import's time.
// The rows read are the table's statistics (sequential and index fetches),
// flushed by pg_stat_force_next_flush on the store's one connection.
func TestAdvanceCursorsReadScopeOnce(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, withParam(t, pgtest.Schema(t), "pool_max_conns", "1"))
	// No autovacuum pass during the test: it would give the planner the
	// statistics a first import does not have yet.
	if _, err := db.pool.Exec(ctx, `ALTER TABLE sessions SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	const n = 1000
	addSessions := func(from, to int) {
		t.Helper()
		if _, err := db.pool.Exec(ctx, `INSERT INTO sessions (tenant, user_id, agent, id, created_at, updated_at)
			SELECT $1, $2, $3, 's' || lpad(g::text, 4, '0'), now(), now() FROM generate_series($4::int, $5::int) AS g`,
			scope.Tenant, scope.User, scope.Agent, from, to); err != nil {
			t.Fatal(err)
		}
	}
	// The connection's plans are made while the scope has two sessions
	// (the server plans a statement afresh five times, then keeps a
	// generic plan while it is not dearer), as at the start of an import,
	// and kept while the table grows.
	addSessions(1, 2)
	for i := range 8 {
		if err := db.AdvanceCursors(ctx, scope, []imprint.CursorMove{{SessionID: "s0001", ToSeq: int64(i)}, {SessionID: "s0002", ToSeq: int64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	addSessions(3, n)
	read := func() int64 { return sessionRowsRead(t, db) }
	for round := range 3 {
		var moves []imprint.CursorMove
		for i := range 8 {
			moves = append(moves, imprint.CursorMove{SessionID: fmt.Sprintf("s%04d", 3+i*97+round), ToSeq: int64(round + 1),
				LastScene: "scene", At: time.Now()})
		}
		before := read()
		if err := db.AdvanceCursors(ctx, scope, moves); err != nil {
			t.Fatal(err)
		}
		got := read() - before
		t.Logf("round %d: %d session rows read", round, got)
		if got > 5*n {
			t.Errorf("round %d: moving %d cursors read %d session rows of a scope of %d (at most %d)", round, len(moves), got, n, 5*n)
		}
		for _, m := range moves {
			s, err := db.GetSession(ctx, scope, m.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if s.Cursor != m.ToSeq {
				t.Errorf("round %d: session %s cursor %d, want %d", round, m.SessionID, s.Cursor, m.ToSeq)
			}
		}
	}
}

// sessionRowsRead is the number of sessions rows the scans of db's
// connection read so far (sequential and index fetches), its statistics
// flushed first; db's pool must have one connection.
func sessionRowsRead(t *testing.T, db *DB) int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := db.pool.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	var rows int64
	if err := db.pool.QueryRow(ctx, `SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0)
		FROM pg_stat_user_tables WHERE relid = 'sessions'::regclass`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	return rows
}
