//go:build unix

package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint"
)

// TestLockForRebuild: a rebuild does not start while imprint serve holds
// the data dir (naming its URL) or while an import runs; once both are
// gone it takes the lock.
func TestLockForRebuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stopServe, err := HoldServe(dir, "http://127.0.0.1:7777")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockForRebuild(t.Context(), dir); !errors.Is(err, imprint.ErrUnavailable) || !strings.Contains(err.Error(), "http://127.0.0.1:7777") {
		t.Fatalf("with serve running: %v, want ErrUnavailable naming its URL", err)
	}
	stopServe()
	stopImport, err := LockImport(t.Context(), dir, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockForRebuild(t.Context(), dir); !errors.Is(err, imprint.ErrUnavailable) {
		t.Fatalf("with an import running: %v, want ErrUnavailable", err)
	}
	stopImport()
	release, err := LockForRebuild(t.Context(), dir)
	if err != nil {
		t.Fatalf("with nothing running: %v", err)
	}
	release()
}
