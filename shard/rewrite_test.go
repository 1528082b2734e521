package shard

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRewriteDropsLinesAndKeepsTheRest: a purge removes exactly the lines
// it names from every day file, leaves untouched files as they were, and
// the writer appends after it as before.
func TestRewriteDropsLinesAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	d1 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	d2 := d1.AddDate(0, 0, 1)
	vals := []any{map[string]string{"id": "a"}, map[string]string{"id": "secret"}, map[string]string{"id": "b"}, map[string]string{"id": "c"}}
	days := []time.Time{d1, d1, d1, d2}
	if err := w.Append(vals, func(i int) time.Time { return days[i] }); err != nil {
		t.Fatal(err)
	}
	before2, _ := os.ReadFile(filepath.Join(dir, FileName(d2)))
	info2, _ := os.Stat(filepath.Join(dir, FileName(d2)))
	n, err := w.Rewrite(func(line []byte) bool { return !bytes.Contains(line, []byte(`"secret"`)) })
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("Rewrite removed %d lines, want 1", n)
	}
	got, _ := os.ReadFile(filepath.Join(dir, FileName(d1)))
	if want := "{\"id\":\"a\"}\n{\"id\":\"b\"}\n"; string(got) != want {
		t.Errorf("day 1 after rewrite = %q, want %q", got, want)
	}
	after2, _ := os.ReadFile(filepath.Join(dir, FileName(d2)))
	info2b, _ := os.Stat(filepath.Join(dir, FileName(d2)))
	if !bytes.Equal(before2, after2) || !os.SameFile(info2, info2b) {
		t.Errorf("a day file without purged lines was rewritten")
	}
	if err := w.Append([]any{map[string]string{"id": "d"}}, func(int) time.Time { return d1 }); err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := w.Read(func(line []byte) error { ids = append(ids, string(bytes.TrimSpace(line))); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 4 || ids[2] != `{"id":"d"}` {
		t.Errorf("lines after rewrite and append = %v", ids)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left in the folder: %d, want the 2 day files (no temporary file)", len(entries))
	}
}
