package extract

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/imprint-dev/imprint/internal/testfiles"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
)

// Benchmarks of issue 4 req 13, on file-backed SQLite stores opened with
// sqlite.Open (the production pragmas). Fixtures of stored memories are
// built once per process, on first use by a benchmark, so a plain `go test`
// never pays for them. Timed work is committed and searchable when the
// timer stops.

var benchMemScope = imprint.Scope{Tenant: "bench", User: "ada", Agent: "assistant"}

// benchSharedDir returns the repository's testdata folder.
func benchSharedDir(tb testing.TB) string {
	tb.Helper()
	return testfiles.Dir()
}

func benchReadLoCoMo(tb testing.TB) []importer.Transcript {
	tb.Helper()
	path := filepath.Join(benchSharedDir(tb), "locomo", "locomo-2conv.json")
	f, err := os.Open(path)
	if err != nil {
		tb.Fatalf("LoCoMo testdata: %v", err)
	}
	defer f.Close()
	trs, err := importer.ReadLoCoMo(f, path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return trs
}

// benchOpenStore opens a new file-backed store in dir.
func benchOpenStore(tb testing.TB, dir string) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "imprint.db"))
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

// benchWords returns the lowercase words of s of at least 5 letters that
// are not in the stop list, in order of first appearance.
func benchWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len([]rune(w)) < 5 || benchStop[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

var benchStop = map[string]bool{
	"about": true, "after": true, "again": true, "being": true, "could": true, "every": true, "really": true,
	"there": true, "these": true, "thing": true, "things": true, "think": true, "those": true, "which": true,
	"while": true, "would": true, "their": true, "where": true, "other": true, "thanks": true, "great": true,
	"sounds": true, "awesome": true, "amazing": true, "always": true, "something": true, "totally": true,
}

// firstSentence returns the first sentence of s (at most 30 words).
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, ".!?\n"); i > 20 {
		s = s[:i+1]
	}
	words := strings.Fields(s)
	if len(words) > 30 {
		words = words[:30]
	}
	return strings.Join(words, " ")
}

// benchExtractor answers OpExtract from the request, as a model would in
// shape and size: per window two memories built from the new messages it
// received — an episodic one restating the longest new message, sourced
// from it, and a persona one naming the window's most frequent topic
// words, sourced from the user messages that use them — in one scene that
// continues the previous scene's name every other window.
func benchExtractor(tb testing.TB) func(llmtest.Request) llmtest.Reply {
	var mu sync.Mutex
	windows := 0
	return func(r llmtest.Request) llmtest.Reply {
		p := parsePrompt(tb, r.User)
		mu.Lock()
		windows++
		w := windows
		mu.Unlock()
		if len(p.New) == 0 {
			return scenesReply()
		}
		longest := p.New[0]
		freq := map[string]int{}
		var order []string
		for _, m := range p.New {
			if len(m.Content) > len(longest.Content) {
				longest = m
			}
			if m.Role != string(imprint.RoleUser) {
				continue
			}
			for _, word := range benchWords(m.Content) {
				if freq[word] == 0 {
					order = append(order, word)
				}
				freq[word]++
			}
		}
		sort.SliceStable(order, func(i, j int) bool { return freq[order[i]] > freq[order[j]] })
		name := fmt.Sprintf("conversation part %d", w)
		if p.PrevScene != "(none)" && w%2 == 0 {
			name = p.PrevScene
		}
		s := scene{Name: name, IDs: p.newIDs()}
		s.Memories = append(s.Memories, mem{
			Content: fmt.Sprintf("On %s the %s said: %s", strings.SplitN(longest.Time, "T", 2)[0], longest.Role, firstSentence(longest.Content)),
			Type:    "episodic", Priority: 70, Sources: []string{longest.ID},
		})
		if len(order) > 0 {
			top := order[:min(3, len(order))]
			var src []string
			for _, m := range p.New {
				if m.Role != string(imprint.RoleUser) {
					continue
				}
				for _, word := range top {
					if strings.Contains(strings.ToLower(m.Content), word) {
						src = append(src, m.ID)
						break
					}
				}
			}
			s.Memories = append(s.Memories, mem{
				Content: "The user cares about " + strings.Join(top, ", ") + ".",
				Type:    "persona", Priority: 60, Sources: src,
			})
		}
		return scenesReply(s)
	}
}

// benchJudge answers OpDedup from the candidate ids it received: a persona
// memory updates its first candidate (merged text = the new text), an
// episodic memory with candidates is stored beside them.
func benchJudge(tb testing.TB) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		j := parseJudge(tb, r.User)
		var ds []map[string]any
		for _, m := range j.NewMemories {
			d := map[string]any{"record_id": m.ID, "action": "store", "target_ids": []string{}}
			if m.Type == "persona" && len(m.CandidateIDs) > 0 {
				d["action"], d["target_ids"], d["merged_content"] = "update", m.CandidateIDs[:1], m.Content
			}
			ds = append(ds, d)
		}
		return llmtest.JSON(map[string]any{"decisions": ds})
	}
}

// BenchmarkExtractLoCoMoConv26 records LoCoMo conv-26 (every message,
// through record.Recorder with the hash embedder) into a fresh file-backed
// store with the timer stopped, then times the extraction of all of it
// with the fake LLM (computed replies; see benchExtractor and benchJudge)
// and the hash embedder, dedup on. It reports the LLM calls and prompt
// tokens of one whole run, prompt tokens per extracted memory, and the
// extraction + dedup prompt tokens relative to the transcript's own size
// (imprint.EstimateTokens of every message). The default window sizes are
// the configuration users get; the others show the window-size levers.
func BenchmarkExtractLoCoMoConv26(b *testing.B) {
	def := DefaultConfig()
	for _, c := range []struct{ newMsgs, background int }{
		{def.MaxMessagesPerExtraction, def.MaxBackgroundMessages}, {20, 5}, {20, 2}, {40, 2},
	} {
		b.Run(fmt.Sprintf("new=%d,background=%d", c.newMsgs, c.background), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MaxMessagesPerExtraction, cfg.MaxBackgroundMessages = c.newMsgs, c.background
			benchExtractConv26(b, cfg)
		})
	}
}

func benchExtractConv26(b *testing.B, cfg Config) {
	var conv importer.Transcript
	for _, tr := range benchReadLoCoMo(b) {
		if tr.SessionID == "conv-26" {
			conv = tr
		}
	}
	if len(conv.Messages) == 0 {
		b.Fatal("conv-26 not found in the LoCoMo testdata")
	}
	transcriptTokens := 0
	for _, m := range conv.Messages {
		transcriptTokens += imprint.EstimateTokens(m.Content)
	}

	srv := llmtest.NewServer(b)
	calls := &llm.MemoryRecorder{}
	client := llmtest.NewClient(b, srv, llmtest.FormatOpenAI, func(o *llm.Options) { o.Recorder = calls })
	emb := embedding.NewHash()
	ctx := context.Background()

	var last struct {
		usage      map[string]imprint.LLMUsage
		extracted  int
		live       int
		windows    int
		judged     int
		sysTokens  int
		bgTokens   int
		newTokens  int
		restTokens int
	}
	for b.Loop() {
		b.StopTimer()
		srv.Reset()
		srv.Handle(OpExtract, benchExtractor(b))
		srv.Handle(OpDedup, benchJudge(b))
		calls.Reset()
		dir, err := os.MkdirTemp(b.TempDir(), "run-")
		if err != nil {
			b.Fatal(err)
		}
		db := benchOpenStore(b, dir)
		conversations, err := shard.NewWriter(filepath.Join(dir, "conversations"))
		if err != nil {
			b.Fatal(err)
		}
		records, err := shard.NewWriter(filepath.Join(dir, "records"))
		if err != nil {
			b.Fatal(err)
		}
		rec := record.NewRecorder(record.Deps{Store: db, Embedder: emb, Conversations: conversations}, record.Config{})
		res, err := rec.Record(ctx, benchMemScope, conv.SessionID, conv.Messages)
		if err != nil || res.RecordedCount != len(conv.Messages) {
			b.Fatalf("recorded %d of %d messages: %v", res.RecordedCount, len(conv.Messages), err)
		}
		runner := NewRunner(Deps{Store: db, LLM: client, Embedder: emb, Records: records}, cfg)
		extracted, windows := 0, 0
		b.StartTimer()

		err = runner.ExtractPending(ctx, benchMemScope, conv.SessionID, func(r Result) {
			extracted += r.ExtractedCount
			windows++
		})

		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if n, err := db.CountPending(ctx, benchMemScope, conv.SessionID); err != nil || n != 0 {
			b.Fatalf("%d messages still pending: %v", n, err)
		}
		live, err := db.CountMemories(ctx, benchMemScope)
		if err != nil {
			b.Fatal(err)
		}
		last.usage, last.extracted, last.live, last.windows = calls.Usage(), extracted, live, windows
		last.judged = len(srv.RequestsFor(OpDedup))
		last.sysTokens, last.bgTokens, last.newTokens, last.restTokens = 0, 0, 0, 0
		for _, r := range srv.RequestsFor(OpExtract) {
			last.sysTokens += imprint.EstimateTokens(r.System)
			p := parsePrompt(b, r.User)
			bg, nw := 0, 0
			for _, m := range p.Background {
				bg += imprint.EstimateTokens(m.Content)
			}
			for _, m := range p.New {
				nw += imprint.EstimateTokens(m.Content)
			}
			last.bgTokens += bg
			last.newTokens += nw
			last.restTokens += imprint.EstimateTokens(r.User) - bg - nw
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}

	ext, dd := last.usage[OpExtract], last.usage[OpDedup]
	prompt := ext.PromptTokens + dd.PromptTokens
	b.ReportMetric(float64(ext.Calls+dd.Calls), "llm-calls")
	b.ReportMetric(float64(ext.Calls), "extract-calls")
	b.ReportMetric(float64(dd.Calls), "dedup-calls")
	b.ReportMetric(float64(last.extracted), "memories")
	b.ReportMetric(float64(prompt)/float64(max(last.extracted, 1)), "prompt-tok/memory")
	b.ReportMetric(float64(prompt)/float64(transcriptTokens), "prompt/transcript")
	b.Logf("conv-26: %d messages, %d transcript tokens; %d windows; extract %d calls / %d prompt tokens "+
		"(system %d, background messages %d, new messages %d, framing %d); dedup %d calls / %d prompt tokens; "+
		"%d memories extracted, %d live",
		len(conv.Messages), transcriptTokens, last.windows, ext.Calls, ext.PromptTokens,
		last.sysTokens, last.bgTokens, last.newTokens, last.restTokens, dd.Calls, dd.PromptTokens,
		last.extracted, last.live)
}

// benchSentences returns varied real sentences (4–40 words) from the
// LoCoMo conversations and the τ-bench trajectories, deduplicated, in a
// fixed order.
func benchSentences(tb testing.TB) []string {
	tb.Helper()
	var texts []string
	for _, tr := range benchReadLoCoMo(tb) {
		for _, m := range tr.Messages {
			texts = append(texts, m.Content)
		}
	}
	path := filepath.Join(benchSharedDir(tb), "tau-bench", "airline-40.json")
	f, err := os.Open(path)
	if err != nil {
		tb.Fatalf("τ-bench testdata: %v", err)
	}
	defer f.Close()
	trs, err := importer.ReadTauBench(f, path)
	if err != nil {
		tb.Fatal(err)
	}
	for _, tr := range trs {
		for _, m := range tr.Messages {
			texts = append(texts, m.Content)
		}
	}
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
		end := r == '\n' || ((r == '.' || r == '!' || r == '?') && (i+1 == len(rs) || rs[i+1] == ' '))
		if end {
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

// benchMemoryText is memory i of a corpus: the sentences one by one, then
// pairs of sentences, so 100k memories are distinct and stay real language.
func benchMemoryText(sents []string, i int) string {
	n := len(sents)
	if i < n {
		return sents[i]
	}
	round := i / n
	return sents[i%n] + " " + sents[(i*7+round*131)%n]
}

// benchMemory builds a live LLM memory of benchMemScope with its vector.
func benchMemory(id, content string, vec []float32, embedder string, at time.Time) imprint.Memory {
	typ := imprint.MemoryEpisodic
	if len(content)%3 == 0 {
		typ = imprint.MemoryPersona
	}
	return imprint.Memory{
		ID: id, Content: content, Type: typ, Priority: 70, SceneName: "bench",
		SourceMessageIDs: []string{}, Timestamps: []imprint.Time{imprint.At(at)},
		CreatedAt: imprint.At(at), UpdatedAt: imprint.At(at), Version: 1,
		SessionID: "bench-session", Scope: benchMemScope, Supersedes: []string{},
		Extractor: imprint.ExtractorLLM, ContentHash: ContentHash(content), Vec: vec, Embedder: embedder,
	}
}

type benchMemFixture struct {
	db    *sqlite.DB
	sents []string
	emb   *embedding.Hash
	n     int
	err   error
}

var (
	benchMemMu       sync.Mutex
	benchMemFixtures = map[int]*benchMemFixture{}
)

// memFixture returns a store holding n live memories of one scope (real
// sentences, hash-embedded vectors, each written with PutMemory as
// extraction does), built once per process.
func memFixture(b *testing.B, n int) *benchMemFixture {
	benchMemMu.Lock()
	defer benchMemMu.Unlock()
	if f, ok := benchMemFixtures[n]; ok {
		if f.err != nil {
			b.Fatal(f.err)
		}
		return f
	}
	f := &benchMemFixture{sents: benchSentences(b), emb: embedding.NewHash(), n: n}
	benchMemFixtures[n] = f
	dir, err := os.MkdirTemp("", "imprint-extract-bench-")
	if err != nil {
		f.err = err
		b.Fatal(err)
	}
	benchCleanup = append(benchCleanup, func() {
		f.db.Close()
		os.RemoveAll(dir)
	})
	f.db = benchOpenStore(b, dir)
	start := time.Now()
	ctx := context.Background()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const chunk = 512
	for lo := 0; lo < n; lo += chunk {
		texts := make([]string, 0, chunk)
		for i := lo; i < min(lo+chunk, n); i++ {
			texts = append(texts, benchMemoryText(f.sents, i))
		}
		vecs, err := f.emb.Embed(ctx, texts)
		if err != nil {
			f.err = err
			b.Fatal(err)
		}
		for k, t := range texts {
			i := lo + k
			m := benchMemory(fmt.Sprintf("mem-%06d", i), t, vecs[k], f.emb.Name(), base.Add(time.Duration(i)*time.Minute))
			if f.err = f.db.PutMemory(ctx, m, nil); f.err != nil {
				b.Fatal(f.err)
			}
		}
	}
	if got, err := f.db.CountMemories(ctx, benchMemScope); err != nil || got != n {
		f.err = fmt.Errorf("fixture holds %d memories, want %d (%v)", got, n, err)
		b.Fatal(f.err)
	}
	b.Logf("fixture of %d memories built in %s", n, time.Since(start).Round(time.Millisecond))
	return f
}

var benchCleanup []func()

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range benchCleanup {
		f()
	}
	os.Exit(code)
}

// recallBatch is the number of new memories deduplicated together, as a
// window of an LLM extraction yields (topK 5 + batch = 10 vector hits).
const recallBatch = 5

// recallQueries returns new memories to deduplicate against a fixture:
// single sentences (stored inside some pairs, so near-duplicates exist) and
// new pairs (related, not equal), with their vectors.
func recallQueries(b *testing.B, f *benchMemFixture, count int) ([]string, [][]float32) {
	texts := make([]string, count)
	ns := len(f.sents)
	for i := range texts {
		if i%2 == 0 {
			texts[i] = f.sents[(i*37)%ns]
		} else {
			texts[i] = f.sents[(i*53)%ns] + " " + f.sents[(i*97+11)%ns]
		}
	}
	vecs, err := f.emb.Embed(context.Background(), texts)
	if err != nil {
		b.Fatal(err)
	}
	return texts, vecs
}

func reportPercentiles(b *testing.B, durs []time.Duration) {
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	pct := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(durs)))) - 1
		return float64(durs[max(i, 0)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
}

// BenchmarkDedupRecall measures the dedup stage's candidate recall per new
// memory at 10k and 100k live memories of one scope: the vector tier
// (SearchVector, MinScore 0.5, limit topK 5 + batch 5, the batch's ids
// excluded) and the keyword tier (SearchText of the memory's distinctive
// terms, recallText with the store's term counts, as the dedup stage
// sends it, counting included; fetch 10). p50/p95 are over every query run.
func BenchmarkDedupRecall(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, tier := range []string{tierVector, tierFTS} {
			b.Run(fmt.Sprintf("%s/%dk", tier, n/1000), func(b *testing.B) {
				f := memFixture(b, n)
				ctx := context.Background()
				texts, vecs := recallQueries(b, f, 200)
				exclude := make([]string, recallBatch)
				for i := range exclude {
					exclude[i] = imprint.NewID()
				}
				topK := DefaultConfig().ConflictRecallTopK
				run := func(i int) ([]imprint.Hit, error) {
					k := i % len(texts)
					if tier == tierVector {
						return f.db.SearchVector(ctx, imprint.VectorQuery{
							Scope: benchMemScope, Kind: imprint.KindMemory, Vector: vecs[k], Embedder: f.emb.Name(),
							MinScore: DefaultConfig().RecallMinScore, ExcludeIDs: exclude, Limit: topK + recallBatch,
						})
					}
					return f.db.SearchText(ctx, imprint.TextQuery{
						Scope: benchMemScope, Kind: imprint.KindMemory, Text: recallText(ctx, f.db, benchMemScope, texts[k]), ExcludeIDs: exclude, Limit: ftsFetch,
					})
				}
				if _, err := run(0); err != nil { // loads the vector index
					b.Fatal(err)
				}
				durs := make([]time.Duration, 0, 4096)
				hits, withCands := 0, 0
				for i := 0; b.Loop(); i++ {
					start := time.Now()
					res, err := run(i)
					durs = append(durs, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					hits += len(res)
					if len(res) > 0 {
						withCands++
					}
				}
				reportPercentiles(b, durs)
				b.ReportMetric(float64(hits)/float64(len(durs)), "hits/op")
				b.ReportMetric(float64(withCands)/float64(len(durs)), "with-candidates")
			})
		}
	}
}

// BenchmarkMemoryInsert measures PutMemory — row, both keyword indexes,
// vector BLOB and the loaded vector index, one transaction per memory, as
// extraction applies decisions — into a scope already holding 10k or 100k
// memories. Vectors are made by the hash embedder before the timer runs;
// only PutMemory is timed. Runs after BenchmarkDedupRecall, whose
// fixtures it grows.
func BenchmarkMemoryInsert(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			f := memFixture(b, n)
			ctx := context.Background()
			// Load the vector index first, as a running service has it.
			if _, err := f.db.SearchVector(ctx, imprint.VectorQuery{Scope: benchMemScope, Kind: imprint.KindMemory,
				Vector: make([]float32, f.emb.Dimensions()), Embedder: f.emb.Name(), Limit: 1}); err != nil {
				b.Fatal(err)
			}
			const pool = 1024
			texts := make([]string, pool)
			for i := range texts {
				texts[i] = f.sents[(i*31+7)%len(f.sents)] + " " + f.sents[(i*17+3)%len(f.sents)]
			}
			vecs, err := f.emb.Embed(ctx, texts)
			if err != nil {
				b.Fatal(err)
			}
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var spent time.Duration
			count := 0
			for i := 0; b.Loop(); i++ {
				m := benchMemory(fmt.Sprintf("ins-%d-%d", n, i)+imprint.NewID(), texts[i%pool], vecs[i%pool], f.emb.Name(), at)
				start := time.Now()
				err := f.db.PutMemory(ctx, m, nil)
				spent += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				count++
			}
			b.ReportMetric(float64(count)/spent.Seconds(), "memories/s")
		})
	}
}
