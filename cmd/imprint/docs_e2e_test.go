package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsSayHowToInstall checks that the README and the Claude Code guide
// give the install commands of this module's binary: go install of the
// module path go.mod declares, and go build from a checkout.
func TestDocsSayHowToInstall(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile(repoFile(t, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(strings.SplitN(string(mod), "\n", 2)[0], "module ")
	for _, doc := range []string{"README.md", "docs/claude-code.md"} {
		b, err := os.ReadFile(repoFile(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"go install " + path + "/cmd/imprint@latest", "go build -o imprint ./cmd/imprint"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s does not say %q", doc, want)
			}
		}
	}
}

// TestDemoEndsWithTheCommandToKeepExploring runs scripts/demo.sh into a
// data dir of the test's and checks that it ends by printing the commands
// to keep exploring that data dir, and that they work as printed.
func TestDemoEndsWithTheCommandToKeepExploring(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo; skipped with -short")
	}
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command("bash", repoFile(t, "scripts/demo.sh"))
	cmd.Env = append(os.Environ(), "DATA_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("demo.sh output:\n%s", out)
	}
	export, run := strings.TrimSpace(lines[len(lines)-2]), strings.TrimSpace(lines[len(lines)-1])
	if export != "export IMPRINT_DATA_DIR="+dir || !strings.HasPrefix(run, "bin/imprint memories") {
		t.Fatalf("demo.sh does not end with the commands to keep exploring %s:\n%s\n%s", dir, export, run)
	}
	mem := exec.Command(filepath.Join(repoFile(t, "bin"), "imprint"), "memories", "--limit", "3")
	mem.Env = []string{"HOME=" + t.TempDir(), "IMPRINT_DATA_DIR=" + dir}
	got, err := mem.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(got), "ID ") || strings.Count(string(got), "\n") != 4 {
		t.Errorf("the printed command: %v\n%s", err, got)
	}
}
