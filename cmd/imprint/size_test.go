package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxWiringLines is the budget of cmd/imprint's non-test Go lines (issue
// 12): the command only parses flags, loads the configuration, wires and
// prints; what a command does lives in a library package.
const maxWiringLines = 1500

// TestWiringStaysSmall fails when the non-test Go files of cmd/imprint
// hold more than maxWiringLines lines (counted as wc -l counts them): a
// command that grows past wiring belongs in a library package.
func TestWiringStaysSmall(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(b, []byte("\n"))
	}
	if total == 0 {
		t.Fatal("no Go files counted in cmd/imprint")
	}
	t.Logf("cmd/imprint: %d non-test lines (budget %d)", total, maxWiringLines)
	if total > maxWiringLines {
		t.Errorf("cmd/imprint has %d non-test lines, over the budget of %d: move what the commands do into a library package (ingest, curate, node, clitext)", total, maxWiringLines)
	}
}
