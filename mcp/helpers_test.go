package mcp_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/curate"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/mcp"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/sqlite"
)

// stack is a real imprint behind an MCP server: a SQLite file, the hash
// embedder, hybrid search, recall, the L0 recorder and in-process
// extraction (the heuristic extractor), as imprint mcp wires them without
// a server.
type stack struct {
	db    *sqlite.DB
	emb   imprint.Embedder
	srv   *mcp.Server
	scope imprint.Scope
}

func newStack(t *testing.T) *stack { return newStackTB(t) }

func newStackTB(t testing.TB) *stack {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb := embedding.NewHash()
	searcher := search.Searcher{Store: db, Embedder: emb}
	rec := record.NewRecorder(record.Deps{Store: db, Embedder: emb, Redact: redact.String}, record.Config{})
	ext := extract.NewRunner(extract.Deps{Store: db, Embedder: emb}, extract.DefaultConfig())
	st := &stack{db: db, emb: emb, scope: imprint.Scope{Tenant: "acme", User: "ann", Agent: "default"}}
	srv, err := mcp.New(mcp.Deps{
		Store: db, Search: searcher, Recorder: rec,
		Recall:   search.Recaller{Searcher: searcher, Memories: db, Traces: db, Messages: db},
		Sessions: mcp.EnderFunc(extractInProcess(db, ext)),
		Memories: curate.New(curate.Deps{Store: db, Extract: ext, Redact: redact.String}),
	}, mcp.Config{Scope: st.scope, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	st.srv = srv
	return st
}

// extractInProcess is the end_session of imprint mcp without a server.
func extractInProcess(db *sqlite.DB, ext *extract.Runner) func(ctx context.Context, scope imprint.Scope, sessionID string) (mcp.SessionEnd, error) {
	return func(ctx context.Context, scope imprint.Scope, sessionID string) (mcp.SessionEnd, error) {
		n, err := db.CountPending(ctx, scope, sessionID)
		if err != nil {
			return mcp.SessionEnd{}, err
		}
		end := mcp.SessionEnd{SessionID: sessionID, PendingMessages: n, Extracted: true}
		err = ext.ExtractPending(ctx, scope, sessionID, func(r extract.Result) { end.MemoriesStored += r.StoredCount })
		return end, err
	}
}

// connect opens a client session on the stack's server over an in-memory
// transport.
func (st *stack) connect(t testing.TB, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	return st.connectClient(t, sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, opts))
}

// connectClient connects client to the stack's server in memory.
func (st *stack) connectClient(t testing.TB, client *sdk.Client) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, stt := sdk.NewInMemoryTransports()
	ss, err := st.srv.Connect(ctx, stt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// putMemory stores a memory of the stack's scope directly, in the
// workspace when one is given.
func (st *stack) putMemory(t testing.TB, id, content string, typ imprint.MemoryType, workspace ...string) imprint.Memory {
	t.Helper()
	ctx := context.Background()
	vecs, err := st.emb.Embed(ctx, []string{content})
	if err != nil {
		t.Fatal(err)
	}
	at := imprint.At(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	m := imprint.Memory{ID: id, Content: content, Type: typ, Priority: typ.PriorityFloor(), SourceMessageIDs: []string{},
		Timestamps: []imprint.Time{at}, CreatedAt: at, UpdatedAt: at, Version: 1, SessionID: "s-seed", Scope: st.scope,
		Supersedes: []string{}, Extractor: imprint.ExtractorHeuristic, ContentHash: extract.ContentHash(content),
		Vec: vecs[0], Embedder: st.emb.Name()}
	if len(workspace) > 0 {
		m.Workspace = workspace[0]
	}
	if err := st.db.PutMemory(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	return m
}

// putTrace stores an episode of one step with a reflection.
func (st *stack) putTrace(t *testing.T, episodeID, user, agent, reflection string, workspace ...string) imprint.Trace {
	t.Helper()
	ctx := context.Background()
	at := imprint.At(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	ep := imprint.Episode{ID: episodeID, SessionID: "s-" + episodeID, Scope: st.scope, Status: imprint.EpisodeFinalized,
		ClosedBy: imprint.ClosedFinalized, StartedAt: at, EndedAt: at}
	tr := imprint.Trace{ID: "tr-" + episodeID, EpisodeID: episodeID, SessionID: ep.SessionID, Scope: st.scope, StepKey: "0",
		TS: at, UserText: user, AgentText: agent, ToolCalls: []imprint.ToolCall{}, Reflection: &reflection,
		ReflectionSource: imprint.ReflectionAdapter, Alpha: 0.8, Usable: true, CreatedAt: at}
	if len(workspace) > 0 {
		ep.Workspace, tr.Workspace = workspace[0], workspace[0]
	}
	if err := st.db.SaveCapture(ctx, ep, []imprint.Trace{tr}); err != nil {
		t.Fatal(err)
	}
	return tr
}

// callTool calls name and returns its result; a protocol failure fails
// the test.
func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

// structured decodes a successful tool result's structured content.
func structured[T any](t *testing.T, res *sdk.CallToolResult) T {
	t.Helper()
	var v T
	if res.IsError {
		t.Fatalf("tool error: %s", resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

// resultText is the text content of a result.
func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// wantToolError checks that res is a tool error whose text holds every
// one of want.
func wantToolError(t *testing.T, res *sdk.CallToolResult, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error, got %s", resultText(res))
	}
	for _, w := range want {
		if !strings.Contains(resultText(res), w) {
			t.Errorf("tool error %q does not say %q", resultText(res), w)
		}
	}
}
