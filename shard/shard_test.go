package shard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAppendShardsByUTCDay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	days := []time.Time{
		time.Date(2026, 5, 1, 23, 30, 0, 0, time.UTC),
		time.Date(2026, 5, 2, 1, 0, 0, 0, time.FixedZone("X", 5*3600)), // 2026-05-01 20:00 UTC
		time.Date(2026, 5, 2, 0, 0, 1, 0, time.UTC),
	}
	vals := []any{map[string]int{"n": 0}, map[string]int{"n": 1}, map[string]int{"n": 2}}
	if err := w.Append(vals, func(i int) time.Time { return days[i] }); err != nil {
		t.Fatal(err)
	}
	files, _ := Files(dir)
	if len(files) != 2 {
		t.Fatalf("files = %v, want two day files", files)
	}
	var got []int
	if err := Read(dir, func(line []byte) error {
		var v struct{ N int }
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		got = append(got, v.N)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Fatalf("read back %v, want [0 1 2] in day order", got)
	}
}

func TestWriteFileSyncCreatesOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "marker.json")
	if err := WriteFileSync(path, []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileSync(path, []byte(`{"n":2}`)); err == nil {
		t.Error("second write of the same file succeeded, want an error")
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != `{"n":1}` {
		t.Errorf("file = %q, %v; want the first write's content", got, err)
	}
}

// TestAppendCreatesThenAppends: the first append to a day creates its file,
// later ones add to it and keep what was there.
func TestAppendCreatesThenAppends(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	day := func(int) time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	for i := range 3 {
		if err := w.Append([]any{map[string]int{"n": i}}, day); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	path := filepath.Join(dir, "2026-05-01.jsonl")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n"; string(got) != want {
		t.Errorf("day file = %q, want %q", got, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o600 != 0o600 {
		t.Errorf("day file mode %v, want it readable and writable by its owner", perm)
	}
}
