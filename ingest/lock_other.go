//go:build !unix

package ingest

import "os"

// tryLock takes no lock where flock(2) does not exist.
func tryLock(*os.File) (bool, error) { return true, nil }

// unlock does nothing where flock(2) does not exist.
func unlock(*os.File) error { return nil }
