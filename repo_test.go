package imprint

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingReadsOutsideTheRepository fails when a test, benchmark or
// script names the shared folder that sits beside the project's own
// checkout: a user's clone has no such folder, so everything the tests need
// must be in testdata/ (see internal/testfiles).
func TestNothingReadsOutsideTheRepository(t *testing.T) {
	t.Parallel()
	// Built from parts so this file does not name the folder itself.
	dir := "sha" + "red"
	needles := []string{"../" + dir, `"` + dir + `", "testdata"`, `"..", "` + dir + `"`}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if ext != ".go" && ext != ".sh" && ext != ".js" && ext != ".mjs" && !strings.HasPrefix(path, ".ci"+string(filepath.Separator)) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if strings.Contains(string(b), n) {
				t.Errorf("%s names %s: copy what it needs into testdata/ instead", path, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
