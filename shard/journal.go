package shard

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/fsync"
)

// JournalDirName is the folder, under a log's folder, of its journal.
const JournalDirName = "inflight"

// Journal keeps the entries of work in flight beside a log's day files,
// one small file each (<log>/inflight/<name>-<random>.json), written
// durably before the work's lines are logged and removed once the work is
// done. An entry still there after a restart tells what a stopped process
// was doing. It is safe for concurrent use.
type Journal struct {
	log   string // the log's folder
	dir   string
	ready atomic.Bool
}

var _ imprint.Journal = (*Journal)(nil)

var (
	// live are the paths of the entries of work in flight in this
	// process, by any Journal: Recover never hands them out.
	live   = map[string]bool{}
	liveMu sync.Mutex
	// recoverMu serializes recoveries in this process, so that two
	// callers do not both work on one entry.
	recoverMu sync.Mutex
)

func setLive(path string, on bool) {
	liveMu.Lock()
	defer liveMu.Unlock()
	if on {
		live[path] = true
	} else {
		delete(live, path)
	}
}

func isLive(path string) bool {
	liveMu.Lock()
	defer liveMu.Unlock()
	return live[path]
}

// Journal returns the journal of the writer's log.
func (w *Writer) Journal() imprint.Journal {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.journal == nil {
		w.journal = &Journal{log: w.dir, dir: filepath.Join(w.dir, JournalDirName)}
	}
	return w.journal
}

// Begin durably writes an entry of work in flight in this process, named
// <name>-<random>.json, holding data.
func (j *Journal) Begin(name string, data []byte) (imprint.JournalEntry, error) {
	if !j.ready.Load() {
		if err := os.MkdirAll(j.dir, 0o755); err != nil {
			return imprint.JournalEntry{}, fmt.Errorf("create journal dir: %w", err)
		}
		if err := fsync.Dir(j.log); err != nil {
			return imprint.JournalEntry{}, err
		}
		j.ready.Store(true)
	}
	path := filepath.Join(j.dir, name+"-"+rand.Text()+".json")
	// Live before it exists, so that no recovery in this process reads it.
	setLive(path, true)
	if err := WriteFileSync(path, data); err != nil {
		setLive(path, false)
		return imprint.JournalEntry{}, fmt.Errorf("journal entry: %w", err)
	}
	return imprint.JournalEntry{ID: path, Name: name, Data: data}, nil
}

// End ends an entry begun in this process: it is removed when remove is
// set, else left for Recover. The removal needs no sync: an entry that
// comes back after a crash is one whose work was done.
func (j *Journal) End(e imprint.JournalEntry, remove bool) error {
	defer setLive(e.ID, false)
	if remove {
		return removeFile(e.ID)
	}
	return nil
}

// Recover calls fn, one entry at a time, with each entry whose name match
// accepts that no work in flight in this process holds (those a stopped
// process left, or this one ended without removing), and removes those
// fn reports done. An entry fn has not seen whole (cut short by a crash
// while it was written) is passed with the data read; fn decides.
func (j *Journal) Recover(match func(name string) bool, fn func(e imprint.JournalEntry) (done bool, err error)) error {
	des, err := os.ReadDir(j.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list journal: %w", err)
	}
	var found []imprint.JournalEntry
	for _, de := range des {
		file := de.Name()
		name, _, ok := strings.Cut(file, "-")
		if !ok || de.IsDir() || !strings.HasSuffix(file, ".json") || !match(name) {
			continue
		}
		found = append(found, imprint.JournalEntry{ID: filepath.Join(j.dir, file), Name: name})
	}
	if len(found) == 0 {
		return nil
	}
	recoverMu.Lock()
	defer recoverMu.Unlock()
	for _, e := range found {
		if isLive(e.ID) {
			continue
		}
		e.Data, err = os.ReadFile(e.ID)
		if errors.Is(err, fs.ErrNotExist) {
			continue // recovered meanwhile
		}
		if err != nil {
			return fmt.Errorf("read journal entry %s: %w", filepath.Base(e.ID), err)
		}
		done, err := fn(e)
		if err != nil {
			return fmt.Errorf("recover journal entry %s: %w", filepath.Base(e.ID), err)
		}
		if done {
			if err := removeFile(e.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeFile removes path; a file that is not there is no error.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
