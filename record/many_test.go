package record

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
)

// manyCalls are sessions with overlapping ids, repeats, empty messages and
// one session given twice, as an importer's transcripts may be.
var manyCalls = []Session{
	{SessionID: "s1", Messages: []imprint.Message{user("m1", "first"), assistant("m2", "second")}},
	{SessionID: "s2", Messages: []imprint.Message{user("m1", "other session"), user("m4", "")}},
	{SessionID: "s1", Messages: []imprint.Message{user("m2", "second again"), user("m3", "third"), user("m3", "third")}},
	{SessionID: "s3", Messages: []imprint.Message{{Role: imprint.RoleUser, Content: "no id", Timestamp: imprint.At(testNow.Add(-time.Hour))}, assistant("a1", "reply")}},
	{SessionID: "s1", Messages: []imprint.Message{user("m1", "first"), user("m5", "fifth")}},
}

// TestRecordManyLikeRecordOneByOne records sessions with RecordMany and
// expects the results, stored messages and shard lines of Record called
// once per session in order, in one store transaction and shard write.
func TestRecordManyLikeRecordOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := Config{EveryNRounds: 2}
	seq, want := recordOneByOne(t, cfg, manyCalls)

	f := newFixture(t, Deps{}, cfg)
	gs := newGateStore(f.db)
	close(gs.gate)
	f = withStore(t, f, gs, cfg)
	got, err := f.rec.RecordMany(ctx, scope, manyCalls)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RecordMany results (-one by one +many):\n%s", diff)
	}
	if diff := cmp.Diff([]int{len(manyCalls)}, gs.sizes); diff != "" {
		t.Errorf("batches per store transaction (-want +got):\n%s", diff)
	}
	sameStored(t, seq, f, "s1", "s2", "s3")
}

// recordOneByOne records sessions with Record, one call each in order, into
// a fixture of its own, and returns it and the results.
func recordOneByOne(t *testing.T, cfg Config, sessions []Session) (fixture, []Result) {
	t.Helper()
	seq := newFixture(t, Deps{Embedder: embedding.NewHash()}, cfg)
	var want []Result
	for _, c := range sessions {
		res, err := seq.rec.Record(context.Background(), scope, c.SessionID, c.Messages)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res)
	}
	return seq, want
}

// sameStored checks that f stored the messages of the sessions and the
// shard lines that seq (recordOneByOne) did.
func sameStored(t *testing.T, seq, f fixture, sessions ...string) {
	t.Helper()
	ctx := context.Background()
	for _, s := range sessions {
		a, err := seq.db.PendingMessages(ctx, scope, s, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.db.PendingMessages(ctx, scope, s, 0)
		if err != nil {
			t.Fatal(err)
		}
		view := func(ms []imprint.Message) []string {
			var out []string
			for _, m := range ms {
				out = append(out, fmt.Sprint(m.ID, " ", m.Role, " ", m.Content, " ", m.Timestamp))
			}
			return out
		}
		if diff := cmp.Diff(view(a), view(b)); diff != "" {
			t.Errorf("session %s messages (-one by one +together):\n%s", s, diff)
		}
	}
	if diff := cmp.Diff(seq.shardLines(t), f.shardLines(t)); diff != "" {
		t.Errorf("shard lines (-one by one +together):\n%s", diff)
	}
}

func TestRecordManyInvalidStoresNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Deps{}, Config{})
	bad := append(append([]Session{}, manyCalls[:2]...), Session{SessionID: "s9", Messages: []imprint.Message{{ID: "x", Role: "tool", Content: "no"}}})
	_, err := f.rec.RecordMany(context.Background(), scope, bad)
	if !errors.Is(err, imprint.ErrInvalid) {
		t.Fatalf("error %v, want ErrInvalid", err)
	}
	if ms, _ := f.db.PendingMessages(context.Background(), scope, "s1", 0); len(ms) != 0 {
		t.Errorf("%d messages stored from an invalid call", len(ms))
	}
}

// TestRecordManyQueuesBehindACommit sends RecordMany while another call's
// commit is held: its sessions queue, are committed in order, and every
// message is recorded once.
func TestRecordManyQueuesBehindACommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, Deps{}, Config{})
	gs := newGateStore(f.db)
	f = withStore(t, f, gs, Config{})
	var wg sync.WaitGroup
	var first Result
	var firstErr error
	wg.Go(func() {
		first, firstErr = f.rec.Record(ctx, scope, "s1", []imprint.Message{user("m0", "zero"), user("m1", "first")})
	})
	<-gs.entered
	var many []Result
	var manyErr error
	wg.Go(func() { many, manyErr = f.rec.RecordMany(ctx, scope, manyCalls) })
	waitQueued(t, f.rec, len(manyCalls))
	close(gs.gate)
	wg.Wait()
	if firstErr != nil || manyErr != nil {
		t.Fatal(firstErr, manyErr)
	}
	if first.RecordedCount != 2 || many[0].RecordedCount != 1 || many[0].Skipped[0].ID != "m1" {
		t.Errorf("first %+v, many[0] %+v; want m1 recorded by the first call only", first, many[0])
	}
	var lines []string
	for _, l := range f.shardLines(t) {
		lines = append(lines, fmt.Sprint(l["session_id"], "/", l["id"]))
	}
	if len(lines) != 2+1+1+1+2+1 {
		t.Errorf("shard lines %v", lines)
	}
}
