package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
)

// testEnv is a runner over a real SQLite file, a fake LLM provider and a
// records shard folder.
type testEnv struct {
	t       *testing.T
	ctx     context.Context
	db      *sqlite.DB
	store   *spyStore
	srv     *llmtest.Server
	dir     string
	scope   imprint.Scope
	runner  *Runner
	deps    Deps
	cfg     Config
	baseDay time.Time
	counts  map[string]int
}

type envOpt func(*testEnv)

func withEmbedder() envOpt { return func(e *testEnv) { e.deps.Embedder = embedding.NewHash() } }
func withoutLLM() envOpt   { return func(e *testEnv) { e.deps.LLM = nil } }

func newTestEnv(t *testing.T, cfg Config, opts ...envOpt) *testEnv {
	t.Helper()
	ctx := t.Context()
	db := openDB(t)
	srv := llmtest.NewServer(t)
	e := &testEnv{
		t: t, ctx: ctx, db: db, store: &spyStore{Store: db}, srv: srv,
		dir:     filepath.Join(t.TempDir(), "records"),
		scope:   imprint.Scope{Tenant: "acme", User: "ada", Agent: "helper"},
		cfg:     cfg,
		baseDay: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC),
		counts:  map[string]int{},
	}
	w, err := shard.NewWriter(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	e.deps = Deps{Store: e.store, LLM: llmtest.NewClient(t, srv, llmtest.FormatOpenAI), Records: w}
	for _, o := range opts {
		o(e)
	}
	e.runner = NewRunner(e.deps, cfg)
	return e
}

func openDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// record appends user messages (an "assistant: " prefix makes an assistant
// message) to a session, one minute apart from at, with ids <session>-<n>.
func (e *testEnv) record(session string, at time.Time, contents ...string) []imprint.Message {
	e.t.Helper()
	prior := e.counts[session]
	e.counts[session] += len(contents)
	msgs := make([]imprint.Message, len(contents))
	for i, c := range contents {
		role := imprint.RoleUser
		if rest, ok := strings.CutPrefix(c, "assistant: "); ok {
			role, c = imprint.RoleAssistant, rest
		}
		msgs[i] = imprint.Message{
			ID: fmt.Sprintf("%s-%d", session, prior+i+1), Role: role, Content: c,
			Timestamp: imprint.At(at.Add(time.Duration(i) * time.Minute)),
		}
	}
	if _, err := e.db.AppendMessages(e.ctx, e.scope, session, msgs); err != nil {
		e.t.Fatal(err)
	}
	return msgs
}

// putMemory stores a live memory directly (as an earlier extraction would).
func (e *testEnv) putMemory(content string, typ imprint.MemoryType) imprint.Memory {
	e.t.Helper()
	m := imprint.Memory{
		ID: imprint.NewID(), Content: content, Type: typ, Priority: 60, SceneName: "earlier",
		SourceMessageIDs: []string{}, Timestamps: []imprint.Time{imprint.At(e.baseDay.Add(-24 * time.Hour))},
		Version: 1, SessionID: "old-session", Scope: e.scope, Supersedes: []string{},
		Extractor: imprint.ExtractorLLM, ContentHash: ContentHash(content),
		CreatedAt: imprint.At(e.baseDay.Add(-24 * time.Hour)),
	}
	if e.deps.Embedder != nil {
		v, err := e.deps.Embedder.Embed(e.ctx, []string{content})
		if err != nil {
			e.t.Fatal(err)
		}
		m.Vec, m.Embedder = v[0], e.deps.Embedder.Name()
	}
	if err := e.db.PutMemory(e.ctx, m, nil); err != nil {
		e.t.Fatal(err)
	}
	return m
}

func (e *testEnv) pending(session string) int {
	e.t.Helper()
	n, err := e.db.CountPending(e.ctx, e.scope, session)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *testEnv) live() []imprint.Memory {
	e.t.Helper()
	ms, err := e.db.ListMemories(e.ctx, e.scope, imprint.MemoryFilter{Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	return ms
}

// extractAll runs ExtractPending and returns the window results.
func (e *testEnv) extractAll(session string) ([]Result, error) {
	var out []Result
	err := e.runner.ExtractPending(e.ctx, e.scope, session, func(r Result) { out = append(out, r) })
	return out, err
}

// spyStore is the real store, with the recall queries it received recorded.
// inject, when set, adds hits in front of a vector search's results, as a
// store that ignored ExcludeIDs would.
type spyStore struct {
	imprint.Store
	mu     sync.Mutex
	vq     []imprint.VectorQuery
	tq     []imprint.TextQuery
	inject func(q imprint.VectorQuery) []imprint.Hit
}

func (s *spyStore) SearchVector(ctx context.Context, q imprint.VectorQuery) ([]imprint.Hit, error) {
	s.mu.Lock()
	s.vq = append(s.vq, q)
	inject := s.inject
	s.mu.Unlock()
	hits, err := s.Store.SearchVector(ctx, q)
	if inject != nil && err == nil {
		hits = append(inject(q), hits...)
	}
	return hits, err
}

func (s *spyStore) SearchText(ctx context.Context, q imprint.TextQuery) ([]imprint.Hit, error) {
	s.mu.Lock()
	s.tq = append(s.tq, q)
	s.mu.Unlock()
	return s.Store.SearchText(ctx, q)
}

func (s *spyStore) queries() ([]imprint.VectorQuery, []imprint.TextQuery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]imprint.VectorQuery(nil), s.vq...), append([]imprint.TextQuery(nil), s.tq...)
}

// promptMsg is one message block of an extraction prompt.
type promptMsg struct{ ID, Role, Time, Content string }

// parsedPrompt is an extraction user message read back.
type parsedPrompt struct {
	PrevScene  string
	Background []promptMsg
	New        []promptMsg
}

func (p parsedPrompt) newIDs() []string {
	out := []string{}
	for _, m := range p.New {
		out = append(out, m.ID)
	}
	return out
}

func (p parsedPrompt) backgroundIDs() []string {
	out := []string{}
	for _, m := range p.Background {
		out = append(out, m.ID)
	}
	return out
}

var blockStart = regexp.MustCompile(`(?m)^\[([^\]]*)\] \[([a-z]+)\] \[([^\]]*)\]: `)

func parseBlocks(s string) []promptMsg {
	s = strings.TrimSuffix(s, "\n")
	if s == "(none)" {
		return nil
	}
	locs := blockStart.FindAllStringSubmatchIndex(s, -1)
	var out []promptMsg
	for i, l := range locs {
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0] - 2 // the blank line between blocks
		}
		out = append(out, promptMsg{ID: s[l[2]:l[3]], Role: s[l[4]:l[5]], Time: s[l[6]:l[7]], Content: s[l[1]:end]})
	}
	return out
}

func parsePrompt(t testing.TB, user string) parsedPrompt {
	t.Helper()
	first, rest, ok := strings.Cut(user, "\n")
	prev, ok2 := strings.CutPrefix(first, "PREVIOUS SCENE: ")
	rest, ok3 := strings.CutPrefix(rest, "BACKGROUND MESSAGES:\n")
	bg, nw, ok4 := strings.Cut(rest, "\nNEW MESSAGES:\n")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatalf("extraction prompt is not in the contract's shape:\n%s", user)
	}
	return parsedPrompt{PrevScene: prev, Background: parseBlocks(bg), New: parseBlocks(nw)}
}

// mem and scene build fake OpExtract replies.
type mem struct {
	Content  string   `json:"content"`
	Type     string   `json:"type"`
	Priority any      `json:"priority,omitempty"`
	Sources  []string `json:"source_message_ids"`
}

type scene struct {
	Name     string   `json:"scene_name"`
	IDs      []string `json:"message_ids"`
	Memories []mem    `json:"memories"`
}

func scenesReply(scenes ...scene) llmtest.Reply {
	for i := range scenes {
		if scenes[i].Memories == nil {
			scenes[i].Memories = []mem{}
		}
	}
	return llmtest.JSON(map[string]any{"scenes": scenes})
}

// rememberExtractor answers OpExtract with one persona memory per new
// message "remember: <fact>", all in one scene.
func rememberExtractor(t testing.TB, sceneName string) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		p := parsePrompt(t, r.User)
		s := scene{Name: sceneName, IDs: p.newIDs()}
		for _, m := range p.New {
			if fact, ok := strings.CutPrefix(m.Content, "remember: "); ok {
				s.Memories = append(s.Memories, mem{Content: fact, Type: "persona", Priority: 60, Sources: []string{m.ID}})
			}
		}
		return scenesReply(s)
	}
}

// judgeRequest is an OpDedup user message read back.
type judgeRequest struct {
	Candidates []struct {
		ID         string   `json:"id"`
		Content    string   `json:"content"`
		Type       string   `json:"type"`
		Priority   int      `json:"priority"`
		SceneName  string   `json:"scene_name"`
		Timestamps []string `json:"timestamps"`
	} `json:"candidates"`
	NewMemories []struct {
		ID           string   `json:"id"`
		Content      string   `json:"content"`
		Type         string   `json:"type"`
		Priority     int      `json:"priority"`
		SceneName    string   `json:"scene_name"`
		CandidateIDs []string `json:"candidate_ids"`
	} `json:"new_memories"`
}

func parseJudge(t testing.TB, user string) judgeRequest {
	t.Helper()
	var j judgeRequest
	if err := json.Unmarshal([]byte(user), &j); err != nil {
		t.Fatalf("dedup request is not the contract's JSON document: %v\n%s", err, user)
	}
	return j
}

// storeAllJudge answers OpDedup with store for every new memory.
func storeAllJudge(t testing.TB) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		j := parseJudge(t, r.User)
		var ds []map[string]any
		for _, m := range j.NewMemories {
			ds = append(ds, map[string]any{"record_id": m.ID, "action": "store", "target_ids": []string{}})
		}
		return llmtest.JSON(map[string]any{"decisions": ds})
	}
}

func recordIDs(rs []imprint.Memory) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func warningCodes(ws []Warning) map[string]int {
	out := map[string]int{}
	for _, w := range ws {
		out[w.Stage+"/"+w.Code]++
	}
	return out
}
