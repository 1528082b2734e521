package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// walBacklog runs a PASSIVE checkpoint on the writer and returns how many
// frames the WAL holds and how many of them are in the database file.
func walBacklog(t *testing.T, db *DB) (frames, done int) {
	t.Helper()
	var busy int
	if err := db.w.QueryRowContext(t.Context(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done); err != nil {
		t.Fatal(err)
	}
	return frames, done
}

// TestBackgroundCheckpoint checks that one-row write transactions leave
// checkpointing to the background connection: the writer's automatic
// checkpoint is set far above what the background lets the WAL reach, and
// after many small commits the database file holds their pages (the WAL
// has been copied back) although no commit ran a checkpoint itself.
func TestBackgroundCheckpoint(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "imprint.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var auto int
	if err := db.w.QueryRowContext(t.Context(), "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != walBackstopPages {
		t.Errorf("writer wal_autocheckpoint = %d, want the backstop %d", auto, walBackstopPages)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	before := info.Size()
	sc := imprint.DefaultScope()
	const n = 3 * ckptEvery
	for i := range n {
		m := imprint.Memory{ID: fmt.Sprintf("m%03d", i), Scope: sc, Type: imprint.MemoryPersona,
			Content: fmt.Sprintf("the user keeps %d plants on the balcony and waters them weekly", i)}
		if err := db.PutMemory(t.Context(), m, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The database file grows only when a checkpoint copies pages into
	// it; commits alone append to the WAL.
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("database file still %d bytes after %d commits: no background checkpoint ran", info.Size(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, err := db.CountMemories(t.Context(), sc); err != nil || got != n {
		t.Fatalf("count = %d, %v; want %d", got, err, n)
	}
}

// TestCloseCheckpointsEverything checks that Close stops the checkpointer
// and leaves a database that a new process opens with every write.
func TestCloseCheckpointsEverything(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "imprint.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	sc := imprint.DefaultScope()
	for i := range 10 {
		if err := db.PutMemory(t.Context(), imprint.Memory{ID: fmt.Sprintf("m%d", i), Scope: sc, Type: imprint.MemoryPersona,
			Content: fmt.Sprintf("fact number %d", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Errorf("WAL file left after Close (stat err %v): the last connection should checkpoint and remove it", err)
	}
	db, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, err := db.CountMemories(t.Context(), sc); err != nil || got != 10 {
		t.Fatalf("count after reopen = %d, %v; want 10", got, err)
	}
	frames, done := walBacklog(t, db)
	if frames != done {
		t.Errorf("WAL frames %d, checkpointed %d", frames, done)
	}
}

// TestPutMemoryRecoversFromFailedTransactions checks the raw write path:
// a write refused mid-transaction (conflict) or cut off by its context
// rolls back and leaves the writer usable for the next write.
func TestPutMemoryRecoversFromFailedTransactions(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	defer db.Close()
	ctx := t.Context()
	sc := imprint.DefaultScope()
	other := imprint.Scope{Tenant: "t2", User: "u2", Agent: "a2"}
	put := func(ctx context.Context, id string, s imprint.Scope, sup ...string) error {
		return db.PutMemory(ctx, imprint.Memory{ID: id, Scope: s, Type: imprint.MemoryPersona, Content: "content of " + id}, sup)
	}
	if err := put(ctx, "a", sc); err != nil {
		t.Fatal(err)
	}
	// The row of "b" is written before the supersede target is found
	// missing: the whole transaction must roll back.
	if err := put(ctx, "b", sc, "missing"); !errors.Is(err, imprint.ErrConflict) {
		t.Fatalf("supersede of a missing memory: %v, want a conflict", err)
	}
	if _, err := db.GetMemory(ctx, sc, "b"); !errors.Is(err, imprint.ErrNotFound) {
		t.Fatalf("memory of a rolled-back transaction: %v, want not found", err)
	}
	if err := put(ctx, "a", other); !errors.Is(err, imprint.ErrConflict) {
		t.Fatalf("id of another scope: %v, want a conflict", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := put(cancelled, "c", sc); err == nil {
		t.Fatal("write with a cancelled context succeeded")
	}
	if err := put(ctx, "d", sc, "a"); err != nil {
		t.Fatalf("write after failed transactions: %v", err)
	}
	got, err := db.ListMemories(ctx, sc, imprint.MemoryFilter{AllVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"a", "d"}) {
		t.Errorf("memories = %v, want [a d]", ids)
	}
	hits, err := db.SearchText(ctx, imprint.TextQuery{Scope: sc, Kind: imprint.KindMemory, Text: "content", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].ID != "d" {
		t.Errorf("keyword hits = %+v, want only the live memory d", hits)
	}
}

// TestCloseTwice checks that a second Close is harmless.
func TestCloseTwice(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	if err := db.PutMemory(t.Context(), imprint.Memory{ID: "m", Scope: imprint.DefaultScope(), Type: imprint.MemoryPersona, Content: "x y"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
