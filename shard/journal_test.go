package shard

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// The journal of a log: an entry of work in flight is never handed to a
// recovery of the same process; once ended without removal (as a process
// that died leaves it) it is, with its data, to the recoveries whose match
// accepts its name, and it goes when one reports it done.
func TestJournalRecoversEntriesLeftBehind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	j := w.Journal()
	a, err := j.Begin("a", []byte(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := j.Begin("b", []byte(`{"n":2}`))
	if err != nil {
		t.Fatal(err)
	}
	seen := func(match func(string) bool, done bool) []string {
		t.Helper()
		var got []string
		if err := j.Recover(match, func(e imprint.JournalEntry) (bool, error) {
			got = append(got, e.Name+" "+string(e.Data))
			return done, nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := func(string) bool { return true }
	if got := seen(all, true); len(got) != 0 {
		t.Fatalf("entries in flight recovered: %v", got)
	}
	if err := j.End(a, false); err != nil {
		t.Fatal(err)
	}
	if err := j.End(b, true); err != nil {
		t.Fatal(err)
	}
	onlyB := func(name string) bool { return name == "b" }
	if got := seen(onlyB, true); len(got) != 0 {
		t.Fatalf("a removed entry, or one of another name, recovered: %v", got)
	}
	if got := seen(all, false); !slices.Equal(got, []string{`a {"n":1}`}) {
		t.Fatalf("recovered %v, want the entry left behind", got)
	}
	if got := seen(all, true); !slices.Equal(got, []string{`a {"n":1}`}) {
		t.Fatalf("recovered %v, want the entry kept by the recovery before", got)
	}
	if got := seen(all, true); len(got) != 0 {
		t.Fatalf("an entry reported done is still there: %v", got)
	}
	des, err := os.ReadDir(filepath.Join(dir, JournalDirName))
	if err != nil || len(des) != 0 {
		t.Errorf("journal folder holds %v (%v), want nothing", des, err)
	}
	// The day files are not the journal's: Read sees none of it.
	if err := w.Read(func([]byte) error { t.Error("a journal entry read as a line"); return nil }); err != nil {
		t.Fatal(err)
	}
}
