package viewer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/search"
	"github.com/imprint-dev/imprint/sqlite"
	"github.com/imprint-dev/imprint/viewer"
)

// The viewer's pages at size: 100k memories and 100k traces (10k episodes
// of 10 steps) in one scope, with 10k messages in 100 sessions, every
// record embedded, on a file-backed SQLite store as imprint serve opens
// it. Built once per process on first use, so a plain go test never pays.

const (
	benchMemories = 100_000
	benchEpisodes = 10_000
	benchSteps    = 10
	benchSessions = 100
	benchMsgs     = 100 // per session
)

var benchScope = imprint.Scope{Tenant: "bench", User: "bench", Agent: "bench"}

type pageFixture struct {
	once    sync.Once
	dir     string
	db      *sqlite.DB
	handler http.Handler
	err     error
}

var pages pageFixture

func TestMain(m *testing.M) {
	code := m.Run()
	if pages.db != nil {
		pages.db.Close()
		if os.Getenv("IMPRINT_VIEWER_BENCH_DIR") == "" {
			os.RemoveAll(pages.dir)
		}
	}
	os.Exit(code)
}

// benchTexts are the message texts of the shared LoCoMo conversations.
func benchTexts(b *testing.B) []string {
	f, err := os.Open(testfiles.Path(b, "locomo/locomo-2conv.json"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	trs, err := importer.ReadLoCoMo(f, "locomo-2conv.json", time.UTC)
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, tr := range trs {
		for _, m := range tr.Messages {
			if len(strings.Fields(m.Content)) >= 4 {
				out = append(out, m.Content)
			}
		}
	}
	return out
}

func benchPages(b *testing.B) *pageFixture {
	pages.once.Do(func() { pages.err = pages.build(b) })
	if pages.err != nil {
		b.Fatal(pages.err)
	}
	return &pages
}

func (f *pageFixture) build(b *testing.B) error {
	start := time.Now()
	ctx := context.Background()
	texts := benchTexts(b)
	text := func(i int) string {
		n := len(texts)
		if i < n {
			return texts[i]
		}
		return texts[i%n] + " " + texts[(i*7+i/n*131)%n]
	}
	var err error
	emb := embedding.NewHash()
	// IMPRINT_VIEWER_BENCH_DIR keeps the fixture there and reuses it on
	// the next run (building it takes minutes on 2 cores).
	keep := os.Getenv("IMPRINT_VIEWER_BENCH_DIR")
	if keep != "" {
		f.dir = keep
		_, statErr := os.Stat(filepath.Join(keep, "imprint.db"))
		if f.db, err = sqlite.Open(ctx, filepath.Join(keep, "imprint.db")); err != nil {
			return err
		}
		if statErr == nil {
			return f.serve(emb)
		}
	} else {
		if f.dir, err = os.MkdirTemp("", "imprint-viewer-bench-"); err != nil {
			return err
		}
		if f.db, err = sqlite.Open(ctx, filepath.Join(f.dir, "imprint.db")); err != nil {
			return err
		}
	}
	embed := func(ts []string) ([][]float32, error) { return emb.Embed(ctx, ts) }
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) imprint.Time { return imprint.At(base.Add(time.Duration(i) * time.Second)) }
	// Messages.
	for s := range benchSessions {
		msgs := make([]imprint.Message, 0, benchMsgs)
		ts := make([]string, 0, benchMsgs)
		for i := range benchMsgs {
			ts = append(ts, text(s*benchMsgs+i))
		}
		vecs, err := embed(ts)
		if err != nil {
			return err
		}
		for i, t := range ts {
			role := imprint.RoleUser
			if i%2 == 1 {
				role = imprint.RoleAssistant
			}
			msgs = append(msgs, imprint.Message{ID: fmt.Sprintf("m%d", i), Role: role, Content: t, Timestamp: at(s*benchMsgs + i),
				Vec: vecs[i], Embedder: emb.Name()})
		}
		if _, err := f.db.AppendMessages(ctx, benchScope, fmt.Sprintf("s%03d", s), msgs); err != nil {
			return err
		}
	}
	// Memories, as extraction writes them.
	const chunk = 500
	for lo := 0; lo < benchMemories; lo += chunk {
		ts := make([]string, 0, chunk)
		for i := lo; i < min(lo+chunk, benchMemories); i++ {
			ts = append(ts, text(i))
		}
		vecs, err := embed(ts)
		if err != nil {
			return err
		}
		for k, t := range ts {
			i := lo + k
			typ := []imprint.MemoryType{imprint.MemoryPersona, imprint.MemoryEpisodic, imprint.MemoryEpisodic, imprint.MemoryInstruction}[i%4]
			s := i % benchSessions
			m := imprint.Memory{ID: fmt.Sprintf("mem-%06d", i), Content: t, Type: typ, Priority: 70, SceneName: "bench",
				SourceMessageIDs: []string{fmt.Sprintf("m%d", i%benchMsgs)}, Timestamps: []imprint.Time{at(i)},
				CreatedAt: at(i), UpdatedAt: at(i), Version: 1, SessionID: fmt.Sprintf("s%03d", s), Scope: benchScope,
				Supersedes: []string{}, Extractor: imprint.ExtractorLLM, Vec: vecs[k], Embedder: emb.Name(),
				ContentHash: fmt.Sprintf("h%06d", i)}
			if err := f.db.PutMemory(ctx, m, nil); err != nil {
				return err
			}
		}
	}
	// Episodes and their traces, captured in batches as an import does.
	const batch = 100
	for lo := 0; lo < benchEpisodes; lo += batch {
		var eps []imprint.Episode
		var trs [][]imprint.Trace
		for e := lo; e < min(lo+batch, benchEpisodes); e++ {
			ep := imprint.Episode{ID: fmt.Sprintf("ep-%05d", e), SessionID: fmt.Sprintf("s%03d", e%benchSessions), Scope: benchScope,
				Status: imprint.EpisodeFinalized, ClosedBy: imprint.ClosedFinalized, StartedAt: at(e * 60), EndedAt: at(e*60 + 50),
				CreatedAt: at(e * 60), UpdatedAt: at(e*60 + 50),
				Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: text(e)}, {Role: imprint.RoleAssistant, Content: text(e + 1)}}}
			var steps []imprint.Trace
			var ts []string
			for k := range benchSteps {
				ts = append(ts, text(e*benchSteps+k))
			}
			vecs, err := embed(ts)
			if err != nil {
				return err
			}
			for k := range benchSteps {
				refl := "reflection " + text(e*benchSteps+k+3)
				steps = append(steps, imprint.Trace{ID: fmt.Sprintf("tr-%05d-%d", e, k), StepKey: fmt.Sprint(k), StepIndex: k, TS: at(e*60 + k),
					UserText: ts[k], AgentText: text(e*benchSteps + k + 1), Reflection: &refl, ReflectionSource: imprint.ReflectionAdapter,
					Alpha: 0.7, Usable: true, VecSummary: vecs[k], VecAction: vecs[k], Embedder: emb.Name(),
					ToolCalls: []imprint.ToolCall{{Name: "search_flights", Output: `{"ok":true}`}}})
			}
			eps, trs = append(eps, ep), append(trs, steps)
		}
		if err := f.db.SaveCaptures(ctx, eps, trs); err != nil {
			return err
		}
	}
	b.Logf("fixture of %d memories, %d traces, %d messages built in %s", benchMemories, benchEpisodes*benchSteps,
		benchSessions*benchMsgs, time.Since(start).Round(time.Second))
	return f.serve(emb)
}

// serve builds the viewer and the HTTP API in front of it over the fixture.
func (f *pageFixture) serve(emb *embedding.Hash) error {
	searcher := search.Searcher{Store: f.db, Embedder: emb}
	recall := search.Recaller{Searcher: searcher, Memories: f.db, Traces: f.db, Messages: f.db}
	web, err := viewer.New(viewer.Deps{Store: f.db, Search: searcher, Recall: recall})
	if err != nil {
		return err
	}
	f.handler = httpapi.NewServer(httpapi.Deps{Store: f.db, Search: searcher, Recall: recall, Viewer: web}, httpapi.Config{})
	return nil
}

// BenchmarkPages times each page server-side (through the HTTP API's
// perimeter, as imprint serve answers it), beside the API's own memory
// list as the baseline of the same run.
func BenchmarkPages(b *testing.B) {
	f := benchPages(b)
	sc := "tenant=bench&user=bench&agent=bench"
	for _, p := range []struct{ name, path string }{
		{"baseline-api-memories", "/v1/memories?" + sc},
		{"overview", "/?" + sc},
		{"memories", "/memories?" + sc},
		{"memories-type", "/memories?type=instruction&" + sc},
		{"memories-session", "/memories?session=s042&" + sc},
		{"memories-text", "/memories?q=painting+sunset&" + sc},
		{"memory", "/memories/mem-054321?" + sc},
		{"episodes", "/episodes?" + sc},
		{"episodes-session", "/episodes?session=s042&" + sc},
		{"episode", "/episodes/ep-04321?" + sc},
		{"sessions", "/sessions?" + sc},
		{"session", "/sessions/s042?" + sc},
		{"search", "/search?q=painting+sunset&" + sc},
		{"search-memories", "/search?kind=memory&q=painting+sunset&" + sc},
		{"live", "/live?" + sc},
	} {
		b.Run(p.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", p.path, nil)
			req.Host = "127.0.0.1"
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			for b.Loop() {
				w := httptest.NewRecorder()
				f.handler.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s: %d %s", p.path, w.Code, w.Body.String()[:min(300, w.Body.Len())])
				}
			}
		})
	}
}
