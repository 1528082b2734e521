package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/imprint-dev/imprint/internal/pgtest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/postgres"
)

// benchNoEnv is an empty environment: no IMPRINT_* variable, so no LLM is
// configured and everything runs on the embedded defaults.
func benchNoEnv(string) (string, bool) { return "", false }

// BenchmarkImportTestdata runs `imprint import --json --data-dir DIR
// testdata/` in-process (runEnv, the code path of the binary)
// with no LLM, into a fresh data folder per iteration: reading and
// sniffing every file, recording the L0 messages, capturing the episodes
// into traces and heuristic extraction, as selected by the flags of each
// sub-benchmark. Only the import command is timed; it has closed the store
// (everything committed) when it returns. messages/s and episodes/s are
// what the summary reports as recorded and captured, over the timed wall
// time. The postgres-* rows import into a fresh schema of the test
// database, which creating the tables is part of; the -migrated rows into
// one migrated beforehand (untimed): the steady state, without creating
// the schema. Their schemas are left to the cluster's teardown
// (pgtest.KeptSchema).
func BenchmarkImportTestdata(b *testing.B) {
	src := testfiles.Dir()
	if _, err := os.Stat(src); err != nil {
		b.Fatalf("test data: %v", err)
	}
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"full", nil},
		{"no-extract", []string{"--no-extract"}},
		{"record-only", []string{"--no-capture", "--no-extract"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchImport(b, c.flags, src, nil)
		})
		// The same import into PostgreSQL (a fresh schema each time),
		// when a test database is there (scripts/postgres.sh).
		if os.Getenv(pgtest.EnvURL) == "" {
			continue
		}
		b.Run("postgres-"+c.name, func(b *testing.B) {
			benchImport(b, c.flags, src, func() string { return pgtest.KeptSchema(b) })
		})
		// The same into a schema migrated beforehand (untimed): the
		// steady state of a database imported into more than once,
		// without the fixed cost of creating the schema.
		b.Run("postgres-"+c.name+"-migrated", func(b *testing.B) {
			benchImport(b, c.flags, src, migratedSchema(b))
		})
	}
}

// migratedSchema returns a function that makes a fresh schema of the test
// database, migrated by postgres.Open, and returns its URL.
func migratedSchema(b *testing.B) func() string {
	return func() string {
		u := pgtest.KeptSchema(b)
		db, err := postgres.Open(context.Background(), u)
		if err != nil {
			b.Fatalf("migrate the schema: %v", err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		return u
	}
}

// benchImport times imprint import of src with flags into a fresh data
// dir each time, and with store() as IMPRINT_STORE when it is not nil.
func benchImport(b *testing.B, flags []string, src string, store func() string) {
	ctx := context.Background()
	var spent time.Duration
	var msgs, eps, traces, mems int
	var sum importSummary
	for b.Loop() {
		b.StopTimer()
		dir, err := os.MkdirTemp(b.TempDir(), "data-")
		if err != nil {
			b.Fatal(err)
		}
		args := append([]string{"import", "--json", "--data-dir", dir}, flags...)
		args = append(args, src)
		env := benchNoEnv
		if store != nil {
			u := store()
			env = func(k string) (string, bool) {
				if k == "IMPRINT_STORE" {
					return u, true
				}
				return "", false
			}
		}
		var stdout, stderr bytes.Buffer
		b.StartTimer()

		start := time.Now()
		code := runEnv(ctx, args, env, strings.NewReader(""), &stdout, &stderr)
		spent += time.Since(start)

		b.StopTimer()
		if code != 0 {
			b.Fatalf("import exit %d: %s", code, stderr.String())
		}
		sum = importSummary{}
		if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
			b.Fatalf("summary %q: %v", stdout.String(), err)
		}
		if sum.MessagesRecorded == 0 {
			b.Fatalf("nothing recorded: %s", stdout.String())
		}
		msgs += sum.MessagesRecorded
		eps += sum.Episodes
		traces += sum.Traces
		mems += sum.Memories.Store + sum.Memories.Update + sum.Memories.Merge
		os.RemoveAll(dir)
		b.StartTimer()
	}
	s := spent.Seconds()
	b.ReportMetric(float64(msgs)/s, "messages/s")
	b.ReportMetric(float64(eps)/s, "episodes/s")
	b.ReportMetric(float64(traces)/s, "traces/s")
	b.ReportMetric(float64(mems)/s, "memories/s")
	b.Logf("per import: %d files, %d transcripts, %d messages, %d episodes, %d traces, %d memories, %d warnings",
		sum.Files, sum.Transcripts, sum.MessagesRecorded, sum.Episodes, sum.Traces,
		sum.Memories.Store+sum.Memories.Update+sum.Memories.Merge, len(sum.Warnings))
}
