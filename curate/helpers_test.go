package curate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
)

// env is a data dir as the binary lays it out: a SQLite file, the records
// and conversations shards, the recorder, the extraction runner (no LLM:
// the heuristic extractor and the exact-text dedup) and a Manager.
type env struct {
	t       *testing.T
	dir     string
	db      *sqlite.DB
	records *shard.Writer
	conv    *shard.Writer
	rec     *record.Recorder
	runner  *extract.Runner
	m       *Manager
	scope   imprint.Scope
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	return openEnv(t, dir)
}

func openEnv(t *testing.T, dir string) *env {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(dir, "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	records, err := shard.NewWriter(filepath.Join(dir, "records"))
	if err != nil {
		t.Fatal(err)
	}
	conv, err := shard.NewWriter(filepath.Join(dir, "conversations"))
	if err != nil {
		t.Fatal(err)
	}
	emb := embedding.NewHash()
	e := &env{t: t, dir: dir, db: db, records: records, conv: conv,
		scope: imprint.Scope{Tenant: "acme", User: "ada", Agent: "helper"}}
	e.rec = record.NewRecorder(record.Deps{Store: db, Embedder: emb, Redact: redact.String, Conversations: conv}, record.Config{})
	e.runner = extract.NewRunner(extract.Deps{Store: db, Embedder: emb, Records: records}, extract.DefaultConfig())
	e.m = New(Deps{Store: db, Extract: e.runner, Records: records, Conversations: conv, Redact: redact.String})
	return e
}

// importLoCoMo records the first session of the first LoCoMo conversation
// of the test data and extracts it, returning the session id.
func (e *env) importLoCoMo() string {
	e.t.Helper()
	f, err := os.Open(testfiles.Path(e.t, "locomo/locomo-2conv.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	trs, err := importer.ReadLoCoMo(f, "locomo-2conv.json", time.UTC)
	if err != nil {
		e.t.Fatal(err)
	}
	tr := trs[0]
	if _, err := e.rec.RecordSession(e.t.Context(), e.scope, record.Session{SessionID: tr.SessionID, Messages: tr.Messages, BetweenPeople: tr.BetweenPeople}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.runner.ExtractPending(e.t.Context(), e.scope, tr.SessionID, func(extract.Result) {}); err != nil {
		e.t.Fatal(err)
	}
	return tr.SessionID
}

// shardText returns every line of a shard folder, joined.
func shardText(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	if err := shard.Read(dir, func(line []byte) error { b.Write(bytes.TrimSpace(line)); b.WriteByte('\n'); return nil }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// get returns v, failing t when err is not nil: get(f())(t).
func get[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func isInvalid(err error) bool { return errors.Is(err, imprint.ErrInvalid) }
