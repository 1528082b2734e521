package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/pgtest"
)

// TestAnalyzeAfterGrowth checks that a sessions table no ANALYZE has seen
// is analyzed once the store has recorded analyzeAfter sessions into it,
// and that a cursor move of a few sessions in the scope grown on to 3,000
// then reads a few rows, not the scope's three times over (autovacuum is
// off for the table: only the store analyzes it).
func TestAnalyzeAfterGrowth(t *testing.T) {
	ctx := context.Background()
	u := withParam(t, pgtest.Schema(t), "pool_max_conns", "1")
	db := openAt(t, u)
	if _, err := db.pool.Exec(ctx, `ALTER TABLE sessions SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	n := analyzeAfter["sessions"] + 50
	never := func() bool {
		t.Helper()
		var never bool
		if err := db.pool.QueryRow(ctx, `SELECT reltuples < 0 FROM pg_class WHERE oid = 'sessions'::regclass`).Scan(&never); err != nil {
			t.Fatal(err)
		}
		return never
	}
	record := func(from, to int) {
		t.Helper()
		var bs []imprint.MessageBatch
		for i := from; i < to; i++ {
			sid := fmt.Sprintf("s%04d", i)
			bs = append(bs, imprint.MessageBatch{Scope: scope, SessionID: sid, Messages: []imprint.Message{
				{ID: sid + "-0", Role: imprint.RoleUser, Content: "hello from " + sid}}})
		}
		if _, err := db.AppendMessageBatches(ctx, bs); err != nil {
			t.Fatal(err)
		}
	}
	record(0, analyzeAfter["sessions"]-10)
	time.Sleep(200 * time.Millisecond)
	if !never() {
		t.Fatalf("the sessions table was analyzed at %d sessions, before %d", analyzeAfter["sessions"]-10, analyzeAfter["sessions"])
	}
	record(analyzeAfter["sessions"]-10, n)
	deadline := time.Now().Add(20 * time.Second)
	for never() {
		if time.Now().After(deadline) {
			t.Fatalf("the sessions table was not analyzed 20 s after %d sessions were recorded", n)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The scope grows on, as in a long first import.
	const total = 3000
	record(n, total)

	read := func() int64 { return sessionRowsRead(t, db) }
	for round := range 3 {
		var moves []imprint.CursorMove
		for i := range 8 {
			moves = append(moves, imprint.CursorMove{SessionID: fmt.Sprintf("s%04d", i*29+round), ToSeq: 1, At: time.Now()})
		}
		before := read()
		if err := db.AdvanceCursors(ctx, scope, moves); err != nil {
			t.Fatal(err)
		}
		if got := read() - before; got > 100 {
			t.Errorf("round %d: moving %d cursors read %d session rows of a scope of %d, after ANALYZE (at most 100)",
				round, len(moves), got, total)
		}
	}
}
