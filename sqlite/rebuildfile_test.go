package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/imprint-dev/imprint"
)

// TestRebuildFile: a rebuild keeps what the records do not hold (an API
// key) from the current file, drops its memories, stores what fill
// writes, and keeps the previous file as the backup; a current file that
// cannot be read is no copy but still the backup; a failed fill leaves the
// current file alone.
func TestRebuildFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sc := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	now := imprint.Now()
	memory := func(id string) imprint.Memory {
		return imprint.Memory{ID: id, Content: "User likes " + id, Type: imprint.MemoryPersona, Priority: 50, Version: 1, Scope: sc,
			Timestamps: []imprint.Time{now}, CreatedAt: now, UpdatedAt: now, Supersedes: []string{}, Extractor: imprint.ExtractorManual,
			ContentHash: "hash-" + id}
	}
	fill := func(ctx context.Context, db *DB, _ []SessionCursor) error {
		return db.PutMemory(ctx, memory("coffee"), nil)
	}
	ids := func(t *testing.T, path string) []string {
		t.Helper()
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ms, err := db.ListMemories(ctx, sc, imprint.MemoryFilter{Limit: imprint.NoLimit})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}

	t.Run("carried over", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "imprint.db")
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.PutMemory(ctx, memory("tea"), nil); err != nil {
			t.Fatal(err)
		}
		k, tok := imprint.NewAPIKey(imprint.KeyScope{Tenant: "t"}, "ci", false, now)
		if err := db.CreateAPIKey(ctx, k, imprint.HashAPIKeyToken(tok)); err != nil {
			t.Fatal(err)
		}
		db.Close()
		res, err := RebuildFile(ctx, path, fill)
		if err != nil {
			t.Fatal(err)
		}
		if !res.CarriedOver || res.CarryError != nil || res.Backup != path+RebuildBackupSuffix {
			t.Errorf("RebuildFile = %+v", res)
		}
		if got := ids(t, path); len(got) != 1 || got[0] != "coffee" {
			t.Errorf("rebuilt memories %v, want [coffee]", got)
		}
		if got := ids(t, res.Backup); len(got) != 1 || got[0] != "tea" {
			t.Errorf("backup memories %v, want [tea]", got)
		}
		db, err = Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if keys, err := db.ListAPIKeys(ctx); err != nil || len(keys) != 1 || keys[0].ID != k.ID {
			t.Errorf("keys after the rebuild = %v, %v; want the key carried over", keys, err)
		}
	})

	t.Run("unreadable", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "imprint.db")
		if err := os.WriteFile(path, []byte("not a database, but someone's file"), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := RebuildFile(ctx, path, fill)
		if err != nil {
			t.Fatal(err)
		}
		if res.CarriedOver || res.CarryError == nil {
			t.Errorf("RebuildFile = %+v, want no carry-over and its reason", res)
		}
		if got := ids(t, path); len(got) != 1 || got[0] != "coffee" {
			t.Errorf("rebuilt memories %v, want [coffee]", got)
		}
		if b, err := os.ReadFile(res.Backup); err != nil || string(b) != "not a database, but someone's file" {
			t.Errorf("backup = %q, %v; want the previous file kept", b, err)
		}
	})

	t.Run("fill fails", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "imprint.db")
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.PutMemory(ctx, memory("tea"), nil); err != nil {
			t.Fatal(err)
		}
		db.Close()
		boom := errors.New("bad shard line")
		if _, err := RebuildFile(ctx, path, func(context.Context, *DB, []SessionCursor) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("RebuildFile = %v, want the fill's error", err)
		}
		if got := ids(t, path); len(got) != 1 || got[0] != "tea" {
			t.Errorf("memories after a failed rebuild %v, want [tea] untouched", got)
		}
		if _, err := os.Stat(path + RebuildBackupSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a failed rebuild left a backup: %v", err)
		}
	})
}
