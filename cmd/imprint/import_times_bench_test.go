package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/internal/pgtest"
	"github.com/imprint-dev/imprint/internal/testfiles"
)

// BenchmarkImportTestdataTimes10 is BenchmarkImportTestdata over the
// shipped testdata ten times over, each copy's sessions renamed (Claude
// Code session ids and file names, LoCoMo sample ids, τ-bench task ids): an
// import of 15k messages, whose extraction meets the copies' memories as
// exact duplicates of those stored, and where the fixed costs of a run
// (opening the store, the pipeline filling and draining) weigh a tenth as
// much.
func BenchmarkImportTestdataTimes10(b *testing.B) {
	src := testdataTimes(b, 10)
	b.Run("full", func(b *testing.B) { benchImport(b, nil, src, nil) })
	if os.Getenv(pgtest.EnvURL) == "" {
		return
	}
	// The first import into a database: creating its schema included.
	b.Run("postgres-full", func(b *testing.B) { benchImport(b, nil, src, func() string { return pgtest.KeptSchema(b) }) })
	b.Run("postgres-full-migrated", func(b *testing.B) { benchImport(b, nil, src, migratedSchema(b)) })
}

// testdataTimes writes n copies of the shipped testdata's Claude Code,
// LoCoMo and τ-bench files into a temporary folder, the sessions of copy
// k renamed with the suffix -c<k>, and returns the folder.
func testdataTimes(tb testing.TB, n int) string {
	tb.Helper()
	in := testfiles.Dir()
	out := tb.TempDir()
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(in, rel))
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	write := func(rel string, data []byte) {
		p := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	// rename decodes a JSON array of objects, renames each with fn, and
	// encodes it again.
	rename := func(data []byte, fn func(map[string]any)) []byte {
		var xs []map[string]any
		if err := json.Unmarshal(data, &xs); err != nil {
			tb.Fatal(err)
		}
		for _, x := range xs {
			fn(x)
		}
		b, err := json.Marshal(xs)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	cc, err := filepath.Glob(filepath.Join(in, "claude-code", "*.jsonl"))
	if err != nil || len(cc) == 0 {
		tb.Fatalf("claude code samples: %v", err)
	}
	locomo, tau := read("locomo/locomo-2conv.json"), read("tau-bench/airline-40.json")
	for k := range n {
		suffix := fmt.Sprintf("-c%d", k)
		for _, f := range cc {
			var lines []string
			for _, line := range strings.Split(strings.TrimRight(string(read(filepath.Join("claude-code", filepath.Base(f)))), "\n"), "\n") {
				var rec map[string]any
				if json.Unmarshal([]byte(line), &rec) == nil {
					if sid, ok := rec["sessionId"].(string); ok {
						rec["sessionId"] = sid + suffix
						b, err := json.Marshal(rec)
						if err != nil {
							tb.Fatal(err)
						}
						line = string(b)
					}
				}
				lines = append(lines, line) // lines that are not JSON stay as they are
			}
			name := strings.TrimSuffix(filepath.Base(f), ".jsonl") + suffix + ".jsonl"
			write(filepath.Join(fmt.Sprintf("copy%d", k), "claude-code", name), []byte(strings.Join(lines, "\n")+"\n"))
		}
		write(filepath.Join(fmt.Sprintf("copy%d", k), "locomo", "locomo-2conv.json"), rename(locomo, func(x map[string]any) {
			x["sample_id"] = fmt.Sprint(x["sample_id"]) + suffix
		}))
		write(filepath.Join(fmt.Sprintf("copy%d", k), "tau-bench", "airline-40.json"), rename(tau, func(x map[string]any) {
			if id, ok := x["task_id"].(float64); ok {
				x["task_id"] = int(id) + 1000*(k+1)
			}
		}))
	}
	return out
}
