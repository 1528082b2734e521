package viewer_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
	"github.com/imprint-dev/imprint/viewer"
)

// env is the viewer as imprint serve mounts it: behind the HTTP API, over
// a real SQLite file, with real search.
type env struct {
	t   testing.TB
	db  *sqlite.DB
	srv *httpapi.Server
	ts  *httptest.Server
}

var scopeA = imprint.Scope{Tenant: "acme", User: "ana", Agent: "coder"}

func newEnv(t testing.TB, cfg httpapi.Config) *env {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	emb := embedding.NewHash()
	searcher := search.Searcher{Store: db, Embedder: emb}
	recall := search.Recaller{Searcher: searcher, Memories: db, Traces: db, Messages: db}
	dir := t.TempDir()
	records, err := shard.NewWriter(filepath.Join(dir, "records"))
	if err != nil {
		t.Fatal(err)
	}
	runner := extract.NewRunner(extract.Deps{Store: db, Embedder: emb, Records: records}, extract.DefaultConfig())
	mems := curate.New(curate.Deps{Store: db, Extract: runner, Records: records, Redact: redact.String})
	web, err := viewer.New(viewer.Deps{Store: db, Search: searcher, Recall: recall, Memories: mems,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(httpapi.Deps{Store: db, Search: searcher, Recall: recall, Memories: mems, Viewer: web}, cfg)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
		db.Close()
	})
	return &env{t: t, db: db, srv: srv, ts: ts}
}

// page is one answer of the server, its body read.
type page struct {
	status int
	header http.Header
	body   string
}

// get fetches path as the viewer's own page would (same origin), with the
// headers given as name, value pairs.
func (e *env) get(path string, h ...string) page {
	e.t.Helper()
	return e.send("GET", path, nil, append([]string{"Sec-Fetch-Site", "same-origin"}, h...)...)
}

func (e *env) send(method, path string, body io.Reader, h ...string) page {
	e.t.Helper()
	req, err := http.NewRequest(method, e.ts.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// seed stores a session of messages, memories made from them (one with an
// earlier version), and a captured episode with a tool call, in scopeA;
// every text carries markup a page must escape.
func seed(t testing.TB, db *sqlite.DB) {
	t.Helper()
	ctx := context.Background()
	at := func(m int) imprint.Time { return imprint.At(time.Date(2026, 5, 1, 10, m, 0, 0, time.UTC)) }
	msgs := []imprint.Message{
		{ID: "m1", Role: imprint.RoleUser, Content: "I prefer window seats <script>alert(1)</script>", Timestamp: at(0)},
		{ID: "m2", Role: imprint.RoleAssistant, Content: "Noted: window seats.", Timestamp: at(1)},
		{ID: "m3", Role: imprint.RoleUser, Content: "Book the Lisbon flight for May 20", Timestamp: at(2)},
	}
	if _, err := db.AppendMessages(ctx, scopeA, "s-1", msgs); err != nil {
		t.Fatal(err)
	}
	old := imprint.Memory{ID: "mem-old", Content: "User likes aisle seats", Type: imprint.MemoryPersona, Priority: 60, SceneName: "travel",
		SourceMessageIDs: []string{"m1"}, CreatedAt: at(3), UpdatedAt: at(3), Version: 1, SessionID: "s-1", Scope: scopeA,
		Supersedes: []string{}, Extractor: imprint.ExtractorLLM, ContentHash: "h-old"}
	cur := old
	cur.ID, cur.Content, cur.Version, cur.Supersedes, cur.ContentHash = "mem-seat", "User prefers window seats <b>bold</b>", 2, []string{"mem-old"}, "h-seat"
	cur.UpdatedAt = at(4)
	trip := imprint.Memory{ID: "mem-trip", Content: "User booked a flight to Lisbon on 20 May", Type: imprint.MemoryEpisodic, Priority: 70,
		SceneName: "travel", SourceMessageIDs: []string{"m3"}, CreatedAt: at(5), UpdatedAt: at(5), Version: 1, SessionID: "s-1",
		Scope: scopeA, Workspace: "proj-x", Supersedes: []string{}, Extractor: imprint.ExtractorLLM, ContentHash: "h-trip"}
	for _, m := range []struct {
		m   imprint.Memory
		sup []string
	}{{old, nil}, {cur, []string{"mem-old"}}, {trip, nil}} {
		if err := db.PutMemory(ctx, m.m, m.sup); err != nil {
			t.Fatal(err)
		}
	}
	refl := "check the reservation before changing it"
	dur := int64(120)
	ep := imprint.Episode{ID: "ep-1", SessionID: "s-1", Scope: scopeA, Status: imprint.EpisodeFinalized, ClosedBy: imprint.ClosedFinalized,
		Turns:     []imprint.Turn{{Role: imprint.RoleUser, Content: "Change my flight"}, {Role: imprint.RoleAssistant, Content: "Looking"}},
		StartedAt: at(2), EndedAt: at(3), CreatedAt: at(2), UpdatedAt: at(3)}
	tr := imprint.Trace{ID: "tr-1", StepKey: "0", StepIndex: 0, TS: at(3), UserText: "Change my flight <img src=x onerror=alert(2)>",
		AgentText: "Let me look up the reservation", Reflection: &refl, ReflectionSource: imprint.ReflectionAdapter, Alpha: 0.8, Usable: true,
		ToolCalls: []imprint.ToolCall{{Name: "get_reservation_details", Input: json.RawMessage(`{"reservation_id":"ABC123"}`),
			Output: `{"status":"ok"}`, Error: "", DurationMS: &dur}}}
	if err := db.SaveCapture(ctx, ep, []imprint.Trace{tr}); err != nil {
		t.Fatal(err)
	}
}

func q(s imprint.Scope) string {
	return "?tenant=" + s.Tenant + "&user=" + s.User + "&agent=" + s.Agent
}

func has(t *testing.T, what string, p page, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(p.body, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, p.body)
		}
	}
}

// testLog writes the viewer's log lines to the test's log.
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
