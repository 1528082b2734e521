// Package fsync makes changes to a folder durable: the files created in,
// renamed into or removed from it survive a crash. The records log (shard)
// and the SQLite store's rebuild use it.
package fsync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Dir syncs the folder dir, so that the files created in or removed from
// it so far survive a crash. Where folders cannot be synced (Windows) it
// does nothing.
func Dir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	serr := d.Sync()
	cerr := d.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("sync dir %s: %w", filepath.Base(dir), err)
	}
	return nil
}
