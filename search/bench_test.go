package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/imprint-dev/imprint/internal/benchtext"
	"github.com/imprint-dev/imprint/internal/testfiles"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/sqlite"
)

// Benchmarks of issue 5 req 8: hybrid search latency over 100k live
// memories of one scope in a file-backed SQLite store opened with
// sqlite.Open (the production pragmas). The fixture is built once per
// process, on first use by a benchmark, so a plain `go test` never pays
// for it.

var benchScope = imprint.Scope{Tenant: "bench", User: "ada", Agent: "assistant"}

// benchSharedDir returns the repository's testdata folder.
func benchSharedDir(tb testing.TB) string {
	tb.Helper()
	return testfiles.Dir()
}

// benchSentences returns varied real sentences (4–40 words) of the LoCoMo
// conversations and the τ-bench trajectories, deduplicated, in a fixed
// order.
func benchSentences(tb testing.TB) []string {
	tb.Helper()
	var texts []string
	read := func(rel string, fn func(f *os.File, path string) ([]importer.Transcript, error)) {
		path := filepath.Join(benchSharedDir(tb), rel)
		f, err := os.Open(path)
		if err != nil {
			tb.Fatalf("shared test data: %v", err)
		}
		defer f.Close()
		trs, err := fn(f, path)
		if err != nil {
			tb.Fatal(err)
		}
		for _, tr := range trs {
			for _, m := range tr.Messages {
				texts = append(texts, m.Content)
			}
		}
	}
	read("locomo/locomo-2conv.json", func(f *os.File, p string) ([]importer.Transcript, error) {
		return importer.ReadLoCoMo(f, p, nil)
	})
	read("tau-bench/airline-40.json", func(f *os.File, p string) ([]importer.Transcript, error) {
		return importer.ReadTauBench(f, p)
	})
	seen := map[string]bool{}
	var out []string
	for _, t := range texts {
		for _, s := range benchSplitSentences(t) {
			n := len(strings.Fields(s))
			if n < 4 || n > 40 || seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) < 1000 {
		tb.Fatalf("only %d sentences in the shared test data", len(out))
	}
	return out
}

func benchSplitSentences(t string) []string {
	var out []string
	start := 0
	rs := []rune(t)
	for i, r := range rs {
		if r == '\n' || ((r == '.' || r == '!' || r == '?') && (i+1 == len(rs) || rs[i+1] == ' ')) {
			if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// benchMemoryText is memory i of the corpus: the sentences one by one, then
// pairs of sentences, so 100k memories are distinct and stay real language.
func benchMemoryText(sents []string, i int) string {
	n := len(sents)
	if i < n {
		return sents[i]
	}
	round := i / n
	return sents[i%n] + " " + sents[(i*7+round*131)%n]
}

type benchFixture struct {
	db    *sqlite.DB
	texts []string
	emb   *embedding.Hash
	err   error
}

var (
	benchMu       sync.Mutex
	benchFixtures = map[int]*benchFixture{}
	benchCleanup  []func()
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range benchCleanup {
		f()
	}
	os.Exit(code)
}

// benchMemories returns a store holding n live memories of benchScope (real
// sentences, hash-embedded vectors, written with PutMemory as extraction
// does), built once per process.
func benchMemories(b *testing.B, n int) *benchFixture {
	benchMu.Lock()
	defer benchMu.Unlock()
	if f, ok := benchFixtures[n]; ok {
		if f.err != nil {
			b.Fatal(f.err)
		}
		return f
	}
	f := &benchFixture{emb: embedding.NewHash()}
	benchFixtures[n] = f
	sents := benchSentences(b)
	dir, err := os.MkdirTemp("", "imprint-search-bench-")
	if err != nil {
		f.err = err
		b.Fatal(err)
	}
	ctx := context.Background()
	f.db, f.err = sqlite.Open(ctx, filepath.Join(dir, "imprint.db"))
	if f.err != nil {
		b.Fatal(f.err)
	}
	benchCleanup = append(benchCleanup, func() {
		f.db.Close()
		os.RemoveAll(dir)
	})
	start := time.Now()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const chunk = 512
	for lo := 0; lo < n; lo += chunk {
		texts := make([]string, 0, chunk)
		for i := lo; i < min(lo+chunk, n); i++ {
			texts = append(texts, benchMemoryText(sents, i))
		}
		vecs, err := f.emb.Embed(ctx, texts)
		if err != nil {
			f.err = err
			b.Fatal(err)
		}
		for k, t := range texts {
			i := lo + k
			at := imprint.At(base.Add(time.Duration(i) * time.Minute))
			typ := imprint.MemoryEpisodic
			if i%3 == 0 {
				typ = imprint.MemoryPersona
			}
			m := imprint.Memory{
				ID: fmt.Sprintf("mem-%06d", i), Content: t, Type: typ, Priority: 70, SceneName: "bench",
				SourceMessageIDs: []string{fmt.Sprintf("msg-%d", i)}, Timestamps: []imprint.Time{at},
				CreatedAt: at, UpdatedAt: at, Version: 1, SessionID: fmt.Sprintf("s%d", i/1000), Scope: benchScope,
				Supersedes: []string{}, Extractor: imprint.ExtractorLLM, Vec: vecs[k], Embedder: f.emb.Name(),
			}
			if f.err = f.db.PutMemory(ctx, m, nil); f.err != nil {
				b.Fatal(f.err)
			}
			f.texts = append(f.texts, t)
		}
	}
	b.Logf("fixture of %d memories built in %s", n, time.Since(start).Round(time.Millisecond))
	return f
}

// benchQueryWords picks, from the distinct lowercase words (5+ letters) of
// the stored texts, the rarest ones (uncommon: a deterministic shuffle of
// the 400 in the fewest texts) or the most frequent ones (common). It also
// returns each word's number of texts.
func benchQueryWords(texts []string, common bool, count int) ([]string, map[string]int) {
	df := map[string]int{}
	for _, t := range texts {
		seen := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if len(w) < 5 || seen[w] {
				continue
			}
			seen[w] = true
			df[w]++
		}
	}
	words := make([]string, 0, len(df))
	for w := range df {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if df[words[i]] != df[words[j]] {
			return (df[words[i]] > df[words[j]]) == common
		}
		return words[i] < words[j]
	})
	if !common {
		words = words[:min(400, len(words))]
		r := rand.New(rand.NewPCG(3, 3))
		r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	}
	return words[:min(count, len(words))], df
}

// BenchmarkSearch runs Searcher.Search over 100k live memories of one
// scope (Kinds memory, limit 10): hybrid (keywords + hash-embedder
// vectors, fused by RRF) and, for comparison, keywords only; queries of 2–3
// uncommon words (each in 2 memories) and of 2–3 of the most frequent
// words. p50/p95 are over every query run.
func BenchmarkSearch(b *testing.B) {
	for _, mode := range []string{"hybrid", "keyword"} {
		for _, kind := range []string{"uncommon", "common"} {
			b.Run(fmt.Sprintf("%s/%s/100k", mode, kind), func(b *testing.B) {
				f := benchMemories(b, 100_000)
				ctx := context.Background()
				words, df := benchQueryWords(f.texts, kind == "common", 40)
				if kind == "common" {
					words = words[:12]
				}
				queries := benchtext.TextQueries(words, 50)
				s := Searcher{Store: f.db}
				if mode == "hybrid" {
					s.Embedder = f.emb
				}
				q := imprint.SearchQuery{Scope: benchScope, Kinds: []imprint.Kind{imprint.KindMemory}, Limit: 10}
				q.Text = queries[0]
				if _, err := s.Search(ctx, q); err != nil { // loads the vector index
					b.Fatal(err)
				}
				durs := make([]time.Duration, 0, 1024)
				hits := 0
				for i := 0; b.Loop(); i++ {
					q.Text = queries[i%len(queries)]
					start := time.Now()
					res, err := s.Search(ctx, q)
					durs = append(durs, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					hits += len(res)
				}
				slices.Sort(durs)
				pct := func(p float64) float64 {
					return float64(durs[max(int(math.Ceil(p*float64(len(durs))))-1, 0)].Microseconds()) / 1000
				}
				b.ReportMetric(pct(0.50), "p50-ms")
				b.ReportMetric(pct(0.95), "p95-ms")
				b.ReportMetric(float64(hits)/float64(len(durs)), "hits/op")
				matches := 0
				for _, w := range words {
					matches += df[w]
				}
				b.Logf("%s queries, e.g. %q, %q; a query word is in %d of %d memories on average",
					kind, queries[0], queries[1], matches/len(words), len(f.texts))
			})
		}
	}
}

var (
	benchMsgOnce sync.Once
	benchMsgErr  error
)

// benchMessages adds n messages to the 100k-memory fixture (once per
// process): the real sentences again, as conversations of 40 turns
// between two named speakers a minute apart, hash-embedded, appended in
// batches as imprint import records them. So recall over the fixture
// reads 100k memories and 100k messages of one scope.
func benchMessages(b *testing.B, n int) *benchFixture {
	f := benchMemories(b, 100_000)
	benchMsgOnce.Do(func() {
		ctx := context.Background()
		sents := benchSentences(b)
		start := time.Now()
		base := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
		const turns = 40
		for lo := 0; lo < n && benchMsgErr == nil; lo += turns {
			msgs := make([]imprint.Message, 0, turns)
			texts := make([]string, 0, turns)
			for i := lo; i < min(lo+turns, n); i++ {
				texts = append(texts, benchMemoryText(sents, (i*13)%(2*len(sents))))
			}
			vecs, err := f.emb.Embed(ctx, texts)
			if err != nil {
				benchMsgErr = err
				break
			}
			for k, t := range texts {
				i := lo + k
				role, speaker := imprint.RoleUser, "Ada"
				if i%2 == 1 {
					role, speaker = imprint.RoleAssistant, "Grace"
				}
				msgs = append(msgs, imprint.Message{ID: fmt.Sprintf("msg-%06d", i), Role: role, Speaker: speaker, Content: t,
					Timestamp: imprint.At(base.Add(time.Duration(i) * time.Minute)), Vec: vecs[k], Embedder: f.emb.Name()})
			}
			_, benchMsgErr = f.db.AppendMessages(ctx, benchScope, fmt.Sprintf("conv-%d", lo/turns), msgs)
		}
		b.Logf("%d messages added in %s", n, time.Since(start).Round(time.Millisecond))
	})
	if benchMsgErr != nil {
		b.Fatal(benchMsgErr)
	}
	return f
}

// benchLatency runs one query per iteration, rotating through queries,
// and reports p50/p95 in ms and the mean number of results.
func benchLatency(b *testing.B, queries []string, run func(q string) (int, error)) {
	durs := make([]time.Duration, 0, 1024)
	n := 0
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		got, err := run(queries[i%len(queries)])
		durs = append(durs, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		n += got
	}
	slices.Sort(durs)
	pct := func(p float64) float64 {
		return float64(durs[max(int(math.Ceil(p*float64(len(durs))))-1, 0)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(float64(n)/float64(len(durs)), "results/op")
}

// BenchmarkSearchMessages is BenchmarkSearch over the 100k messages of
// benchMessages (Kinds message, limit 10), hybrid and keywords only.
func BenchmarkSearchMessages(b *testing.B) {
	for _, mode := range []string{"hybrid", "keyword"} {
		for _, kind := range []string{"uncommon", "common"} {
			b.Run(fmt.Sprintf("%s/%s/100k", mode, kind), func(b *testing.B) {
				f := benchMessages(b, 100_000)
				words, _ := benchQueryWords(f.texts, kind == "common", 40)
				if kind == "common" {
					words = words[:12]
				}
				s := Searcher{Store: f.db}
				if mode == "hybrid" {
					s.Embedder = f.emb
				}
				ctx := context.Background()
				benchLatency(b, benchtext.TextQueries(words, 50), func(q string) (int, error) {
					hits, err := s.Search(ctx, imprint.SearchQuery{Scope: benchScope, Text: q, Kinds: []imprint.Kind{imprint.KindMessage}, Limit: 10})
					return len(hits), err
				})
			})
		}
	}
}

// BenchmarkRecall runs Recaller.Recall at the default budget over the
// fixture's 100k memories and 100k messages, with the hash embedder, for
// queries of uncommon and of common words. results/op is the block's
// records.
func BenchmarkRecall(b *testing.B) {
	for _, kind := range []string{"uncommon", "common"} {
		b.Run(kind+"/100k", func(b *testing.B) {
			f := benchMessages(b, 100_000)
			words, _ := benchQueryWords(f.texts, kind == "common", 40)
			if kind == "common" {
				words = words[:12]
			}
			r := Recaller{Searcher: Searcher{Store: f.db, Embedder: f.emb}, Memories: f.db, Traces: f.db}
			ctx := context.Background()
			benchLatency(b, benchtext.TextQueries(words, 50), func(q string) (int, error) {
				res, err := r.Recall(ctx, imprint.RecallQuery{Scope: benchScope, Text: q})
				return len(res.Hits), err
			})
		})
	}
	// The same recall in a workspace: the fixture's records have none, so
	// all of them are candidates (the workspace-less ones); what is
	// measured is the workspace filter and the workspace's own ranking
	// fused in, against the plain recall above.
	b.Run("uncommon/100k/workspace", func(b *testing.B) {
		f := benchMessages(b, 100_000)
		words, _ := benchQueryWords(f.texts, false, 40)
		r := Recaller{Searcher: Searcher{Store: f.db, Embedder: f.emb}, Memories: f.db, Traces: f.db}
		ctx := context.Background()
		benchLatency(b, benchtext.TextQueries(words, 50), func(q string) (int, error) {
			res, err := r.Recall(ctx, imprint.RecallQuery{Scope: benchScope, Text: q, Workspace: "/src/app"})
			return len(res.Hits), err
		})
	})
}
