package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/imprint-dev/imprint"
)

// LockName is the lock file imprint import holds in the data dir, so
// that one import at a time writes it (two would both spend the LLM on the
// same work and both append it to the records log). imprint serve does not
// take it: serve and an import coexist, as before.
const LockName = "import.lock"

// importLockPoll is how often a waiting import tries the lock again.
const importLockPoll = 100 * time.Millisecond

// LockImport takes the import lock of dataDir and returns its release.
// When another import holds it, it calls waiting with the lock's path and
// the holder's pid and waits until the lock is free or ctx ends; with
// noWait it returns an error of kind ErrUnavailable (exit 1) naming them
// instead. The kernel drops the lock of a process that dies, so a killed
// import never leaves it held. On systems without flock(2) no lock is
// taken.
func LockImport(ctx context.Context, dataDir string, noWait bool, waiting func(path, holder string)) (func(), error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("import lock: create data dir: %w: %v", imprint.ErrUnavailable, err)
	}
	path := filepath.Join(dataDir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("import lock %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	got, err := tryLock(f)
	if err == nil && !got {
		holder := lockHolder(f)
		if noWait {
			f.Close()
			return nil, fmt.Errorf("%w: another imprint import (pid %s) holds the import lock %s: run again once it is done, or without --no-wait to wait for it",
				imprint.ErrUnavailable, holder, path)
		}
		if waiting != nil {
			waiting(path, holder)
		}
		t := time.NewTicker(importLockPoll)
		defer t.Stop()
		for err == nil && !got {
			select {
			case <-ctx.Done():
				f.Close()
				return nil, ctx.Err()
			case <-t.C:
			}
			got, err = tryLock(f)
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("import lock %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	// The holder's pid, for the message of the import that waits.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		_ = f.Truncate(0)
		_ = unlock(f)
		f.Close()
	}, nil
}

// lockHolder reads the pid the lock's holder wrote, "unknown" when none.
func lockHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid := strings.TrimSpace(string(b[:n])); pid != "" {
		return pid
	}
	return "unknown"
}
