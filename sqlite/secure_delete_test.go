package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// TestReplacedTextLeavesNoTraceInTheFile saves an episode whose turns hold
// a marker, saves it again with other turns (as a re-capture does), and
// looks for the marker in the database file after a checkpoint: the pages
// that held the old turns are freed, and without secure_delete they keep
// the old text where anyone with the file can read it.
func TestReplacedTextLeavesNoTraceInTheFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "imprint.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	marker := "QZX7-old-turn-marker-"
	sc := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	now := imprint.Now()
	ep := imprint.Episode{ID: "ep1", SessionID: "s1", Scope: sc, Status: imprint.EpisodeFinalized, ClosedBy: imprint.ClosedFinalized,
		StartedAt: now, EndedAt: now, CreatedAt: now, UpdatedAt: now}
	for i := range 8 {
		ep.Turns = append(ep.Turns, imprint.Turn{Role: imprint.RoleUser, TS: now,
			Content: strings.Repeat(marker, 300) + string(rune('a'+i))})
	}
	if err := db.SaveCapture(ctx, ep, nil); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, db)
	if !fileHolds(t, path, marker) {
		t.Fatal("the marker is not in the file after the first save; the test would prove nothing")
	}
	ep.Turns = []imprint.Turn{{Role: imprint.RoleUser, TS: now, Content: "new text"}}
	if err := db.SaveCapture(ctx, ep, nil); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal"} {
		if fileHolds(t, f, marker) {
			t.Errorf("%s still holds the replaced text", filepath.Base(f))
		}
	}
}

// checkpoint copies the WAL into the database file and truncates it. The
// store's background checkpointer may be running one at the same moment
// (SQLite then answers busy): it tries again, for up to ten seconds.
func checkpoint(t *testing.T, db *DB) {
	t.Helper()
	var busy, frames, done int
	for range 500 {
		if err := db.w.QueryRowContext(t.Context(), "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &done); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		if busy == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("checkpoint: still busy after ten seconds")
}

// fileHolds reports whether the file at path contains s; a missing file
// holds nothing.
func fileHolds(t *testing.T, path, s string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(s))
}

// TestPurgeLeavesTheTextInNeitherFile: a memory purged after a rebuild
// (whose backup, imprint.db.before-rebuild, still holds it) leaves its
// text, FTS tokens included, in neither the database file nor the
// backup; the backup's other memories stay.
func TestPurgeLeavesTheTextInNeitherFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "imprint.db")
	backup := path + RebuildBackupSuffix
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	sc := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	now := imprint.Now()
	put := func(id, content string) {
		t.Helper()
		m := imprint.Memory{ID: id, Content: content, Type: imprint.MemoryPersona, Priority: 50, Version: 1, Scope: sc,
			Timestamps: []imprint.Time{now}, CreatedAt: now, UpdatedAt: now, Supersedes: []string{}, Extractor: imprint.ExtractorManual,
			ContentHash: "hash-" + id}
		if err := db.PutMemory(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	marker := "Qzxvbnm7secretword"
	put("keep", "User likes tea")
	put("gone", "User's locker code is "+marker+" "+strings.Repeat(marker+" ", 50))
	if err := db.CopyTo(ctx, backup); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, db)
	for _, f := range []string{path, backup} {
		if !fileHolds(t, f, marker) {
			t.Fatalf("%s does not hold the marker before the purge; the test would prove nothing", filepath.Base(f))
		}
	}
	if got, err := db.PurgeMemories(ctx, sc, []string{"gone"}); err != nil || len(got) != 1 {
		t.Fatalf("purge = %v, %v", got, err)
	}
	checkpoint(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", backup, backup + "-wal"} {
		if fileHolds(t, f, marker) || fileHolds(t, f, strings.ToLower(marker)) {
			t.Errorf("%s still holds the purged text", filepath.Base(f))
		}
	}
	b, err := Open(ctx, backup)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.GetMemory(ctx, sc, "keep"); err != nil {
		t.Errorf("the backup lost a memory the purge did not name: %v", err)
	}
}
