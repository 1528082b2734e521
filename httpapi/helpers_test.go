package httpapi

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/session"
	"github.com/imprint-dev/imprint/sqlite"
)

const testToken = "s3cret-token"

var (
	scopeA = imprint.Scope{Tenant: "acme", User: "ana", Agent: "coder"}
	scopeB = imprint.Scope{Tenant: "acme", User: "bob", Agent: "coder"}
)

// turnRecorder adapts the L0 recorder to the episode manager, as cmd does.
type turnRecorder struct{ r *record.Recorder }

func (t turnRecorder) RecordTurns(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) error {
	_, err := t.r.Record(ctx, scope, sessionID, msgs)
	return err
}

// storeJobs enqueues straight into the store, as the scheduler does.
type storeJobs struct{ db *sqlite.DB }

func (s storeJobs) Enqueue(ctx context.Context, j imprint.Job) (imprint.Job, error) {
	j, _, err := s.db.EnqueueJob(ctx, j)
	return j, err
}

// env is a real server over a real SQLite store on a loopback port.
type env struct {
	t     testing.TB
	db    *sqlite.DB
	path  string
	srv   *Server
	ts    *httptest.Server
	c     *Client
	calls *llm.MemoryRecorder
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "imprint.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	emb := embedding.NewHash()
	rec := record.NewRecorder(record.Deps{Store: db, Embedder: emb}, record.Config{EveryNRounds: 2})
	mgr := session.NewManager(session.ManagerDeps{Store: db, Recorder: turnRecorder{rec}, Ingest: &ingest.Due{Jobs: storeJobs{db}}}, session.ManagerConfig{})
	calls := &llm.MemoryRecorder{}
	searcher := search.Searcher{Store: db, Embedder: emb}
	runner := extract.NewRunner(extract.Deps{Store: db, Embedder: emb}, extract.DefaultConfig())
	srv := NewServer(Deps{
		Memories: curate.New(curate.Deps{Store: db, Extract: runner}),
		Store:    db,
		Recorder: rec,
		Sessions: mgr,
		Jobs:     storeJobs{db},
		Ingest:   &ingest.Due{Jobs: storeJobs{db}},
		Search:   searcher,
		Recall:   search.Recaller{Searcher: searcher, Memories: db, Traces: db, Messages: db},
		Calls:    calls,
	}, cfg)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
		db.Close()
	})
	return &env{t: t, db: db, path: path, srv: srv, ts: ts, calls: calls,
		c: &Client{BaseURL: ts.URL, Token: cfg.Token, HTTP: ts.Client()}}
}

// reply is a raw answer of the server.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("reply %d is not a JSON object: %v\n%s", r.status, err, r.body)
	}
	return m
}

// errCode returns the code of an error reply, failing when it is not one.
func (r reply) errCode(t *testing.T) (code, msg string) {
	t.Helper()
	var eb errorBody
	if err := json.Unmarshal(r.body, &eb); err != nil || eb.Error.Code == "" {
		t.Fatalf("reply %d is not an error body: %s", r.status, r.body)
	}
	return eb.Error.Code, eb.Error.Message
}

// do sends a raw request; body may be a string, []byte, io.Reader or a
// value encoded as JSON.
func (e *env) do(method, path string, body any, header ...string) reply {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json") // as every client of ours; header may override
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// counts is the number of rows per table: what "nothing written" compares.
func (e *env) counts() map[string]int {
	e.t.Helper()
	conn, err := sql.Open("sqlite", "file:"+e.path+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close()
	out := map[string]int{}
	for _, table := range []string{"sessions", "messages", "episodes", "traces", "memories", "jobs"} {
		var n int
		if err := conn.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			e.t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// unchanged fails when the store's row counts differ from before.
func (e *env) unchanged(before map[string]int, what string) {
	e.t.Helper()
	if diff := cmp.Diff(before, e.counts()); diff != "" {
		e.t.Errorf("%s wrote to the store (-before +after):\n%s", what, diff)
	}
}

func (e *env) putMemory(m imprint.Memory, supersede ...string) {
	e.t.Helper()
	if m.Version == 0 {
		m.Version = 1
	}
	if m.Extractor == "" {
		m.Extractor = imprint.ExtractorHeuristic
	}
	if err := e.db.PutMemory(context.Background(), m, supersede); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) saveCapture(scope imprint.Scope, epID, sessionID string, traces ...imprint.Trace) {
	e.t.Helper()
	ep := imprint.Episode{ID: epID, SessionID: sessionID, Scope: scope, Status: imprint.EpisodeFinalized, ClosedBy: imprint.ClosedFinalized,
		Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: "task of " + epID, TS: imprint.Now()}}}
	for i := range traces {
		traces[i].EpisodeID, traces[i].SessionID, traces[i].Scope = epID, sessionID, scope
	}
	if err := e.db.SaveCapture(context.Background(), ep, traces); err != nil {
		e.t.Fatal(err)
	}
}

// q builds a query string of a scope plus extra key/value pairs.
func q(scope imprint.Scope, kv ...string) string {
	v := scopeQuery(scope)
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}

// waitFor polls cond until it holds or the test's deadline nears.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
