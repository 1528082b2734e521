package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/imprint-dev/imprint"
)

// ServeLockName is the file imprint serve holds locked in the data dir
// while it serves it, holding the URL it listens on, so that a command
// that must not write the data dir's files beside it (a purge rewriting the
// shards) finds the service and goes through its HTTP API instead.
const ServeLockName = "serve.lock"

// HoldServe marks dataDir as served at url by this process until release
// is called (or the process ends: the kernel drops the lock). Another
// imprint serve of the same data dir already holding it is ErrUnavailable.
// On systems without flock(2) it marks nothing.
func HoldServe(dataDir, url string) (release func(), err error) {
	path := filepath.Join(dataDir, ServeLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("serve lock %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	got, err := tryLock(f)
	if err == nil && !got {
		holder := lockHolder(f)
		f.Close()
		return nil, fmt.Errorf("%w: another imprint serve (%s) serves the data dir %s", imprint.ErrUnavailable, holder, dataDir)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("serve lock %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(url+"\n"), 0)
	}
	return func() {
		_ = f.Truncate(0)
		_ = unlock(f)
		f.Close()
	}, nil
}

// RunningService returns the URL of the imprint serve that holds dataDir,
// or "" when none does (or flock(2) does not exist here).
func RunningService(dataDir string) (string, error) {
	path := filepath.Join(dataDir, ServeLockName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("serve lock %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	defer f.Close()
	got, err := tryLock(f)
	if err != nil {
		return "", fmt.Errorf("serve lock %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	if got {
		_ = unlock(f)
		return "", nil
	}
	url := lockHolder(f)
	if url == "unknown" || !strings.HasPrefix(url, "http") {
		return "", fmt.Errorf("%w: an imprint serve holds %s but did not write its address", imprint.ErrUnavailable, path)
	}
	return url, nil
}

// LockForRebuild takes what a rebuild of dataDir's database from its
// shards needs and returns its release: no imprint serve holding the data
// dir (ErrUnavailable naming its URL: stop it first), and the import lock
// without waiting (ErrUnavailable while an import runs).
func LockForRebuild(ctx context.Context, dataDir string) (func(), error) {
	url, err := RunningService(dataDir)
	if err != nil {
		return nil, err
	}
	if url != "" {
		return nil, fmt.Errorf("%w: imprint serve (%s) holds the data dir %s: stop it, then rebuild", imprint.ErrUnavailable, url, dataDir)
	}
	return LockImport(ctx, dataDir, true, nil)
}
