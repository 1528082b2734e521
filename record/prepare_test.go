package record

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
)

// TestPrepareWithoutStoreThenCommit prepares sessions with a Recorder that
// has no store (as an import does while its store opens) and commits them
// with one that has: the results (vectors written included), stored
// messages and shard lines are RecordMany's. Recording with the store-less Recorder is
// an error, not a panic.
func TestPrepareWithoutStoreThenCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := Config{EveryNRounds: 2}
	seq, want := recordOneByOne(t, cfg, manyCalls)

	prep := NewRecorder(Deps{Embedder: embedding.NewHash()}, cfg)
	prep.now = func() time.Time { return testNow }
	p, err := prep.Prepare(ctx, scope, manyCalls)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prep.Commit(ctx, p); !errors.Is(err, errNoStore) {
		t.Errorf("Commit without a store: %v, want errNoStore", err)
	}
	if _, err := prep.RecordMany(ctx, scope, manyCalls); !errors.Is(err, errNoStore) {
		t.Errorf("RecordMany without a store: %v, want errNoStore", err)
	}

	f := newFixture(t, Deps{Embedder: embedding.NewHash()}, cfg)
	got, err := f.rec.Commit(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Prepare + Commit results (-one by one +prepared):\n%s", diff)
	}
	sameStored(t, seq, f, "s1", "s2", "s3")
}

// TestPrepareRejectsInvalidSession checks that Prepare names an invalid
// session as RecordMany does, and needs no store to.
func TestPrepareRejectsInvalidSession(t *testing.T) {
	t.Parallel()
	prep := NewRecorder(Deps{}, Config{})
	_, err := prep.Prepare(context.Background(), scope, []Session{
		{SessionID: "ok", Messages: []imprint.Message{user("m1", "fine")}},
		{SessionID: "bad", Messages: []imprint.Message{{ID: "x", Role: "system", Content: "no"}}},
	})
	if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), "sessions[1]") {
		t.Errorf("Prepare of an invalid session: %v", err)
	}
}
