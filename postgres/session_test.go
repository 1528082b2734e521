package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
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
