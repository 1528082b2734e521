// Package testfiles locates the repository's shared test data, the real
// conversations and transcripts in testdata/ at the module root, for the
// tests and benchmarks of every package.
package testfiles

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the module root's testdata folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// Path returns the path of rel under the module root's testdata folder,
// failing tb when it does not exist.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(Dir(), rel)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("test data %s: %v", rel, err)
	}
	return p
}
