package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/node"
)

// Names the tests read the data dir and the command's output by.
const (
	// dbFileName is the SQLite file inside the data dir.
	dbFileName = node.DBFileName
	// doctorPingOp is the op of doctor's LLM test call.
	doctorPingOp = ingest.DoctorPingOp
)

type (
	// checkResult is one line of imprint doctor.
	checkResult = ingest.Check
	// importSummary is the one object imprint import --json prints.
	importSummary = ingest.Summary
)

// envMap returns a lookup over m, standing in for the process environment.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// hasRole reports whether one of turns has role r.
func hasRole(turns []imprint.Turn, r imprint.Role) bool {
	for _, t := range turns {
		if t.Role == r {
			return true
		}
	}
	return false
}
