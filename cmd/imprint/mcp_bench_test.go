package main

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/httpapi"
	"github.com/imprint-dev/imprint/sqlite"
)

// mcpBenchMemories is the size of the benchmark's store.
const mcpBenchMemories = 10_000

// mcpBenchWords make the fixture's memories and the queries.
var mcpBenchWords = []string{"tea", "coffee", "deploy", "friday", "release", "jasmine", "garden", "flight", "lisbon", "budget",
	"invoice", "python", "golang", "meeting", "dentist", "birthday", "marathon", "piano", "recipe", "allergy", "peanut", "bicycle",
	"library", "museum", "kitchen", "database", "backup", "holiday", "passport", "insurance", "landlord", "printer"}

// mcpBenchFixture writes n memories of the default scope, with the hash
// embedder's vectors, into dataDir's database, as imprint would have.
func mcpBenchFixture(b *testing.B, dataDir string, n int) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	db, err := sqlite.Open(ctx, filepath.Join(dataDir, dbFileName))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	emb := embedding.NewHash()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := mcpBenchWords
	for lo := 0; lo < n; lo += 500 {
		var texts []string
		for i := lo; i < min(lo+500, n); i++ {
			texts = append(texts, fmt.Sprintf("memory %d: the user mentioned %s and %s while talking about %s on day %d",
				i, w[i%len(w)], w[(i*7+3)%len(w)], w[(i*13+5)%len(w)], i%365))
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			b.Fatal(err)
		}
		for k, text := range texts {
			i := lo + k
			at := imprint.At(base.Add(time.Duration(i) * time.Minute))
			m := imprint.Memory{ID: fmt.Sprintf("mem-%05d", i), Content: text, Type: imprint.MemoryEpisodic, Priority: 60,
				SourceMessageIDs: []string{}, Timestamps: []imprint.Time{at}, CreatedAt: at, UpdatedAt: at, Version: 1,
				SessionID: fmt.Sprintf("s-%03d", i%200), Scope: imprint.DefaultScope(), Supersedes: []string{},
				Extractor: imprint.ExtractorHeuristic, ContentHash: fmt.Sprintf("h-%d", i), Vec: vecs[k], Embedder: emb.Name()}
			if err := db.PutMemory(ctx, m, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	if got, err := db.CountMemories(ctx, imprint.DefaultScope()); err != nil || got != n {
		b.Fatalf("fixture holds %d memories, want %d (%v)", got, n, err)
	}
	b.Logf("fixture: %d memories in %s", n, time.Since(start).Round(time.Millisecond))
}

// reportLatency reports the p50 and p99 of the calls.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), "p50_ms")
	b.ReportMetric(q(0.99), "p99_ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max_ms")
}

// BenchmarkMCPStdio is a host's read tool call (search, recall) over stdio
// to the built `imprint mcp` at 10k stored memories, beside the same query
// through the HTTP API of `imprint serve` on the same data dir (the
// baseline), in the same run.
func BenchmarkMCPStdio(b *testing.B) {
	bin := imprintBin(b)
	dir := b.TempDir()
	mcpBenchFixture(b, dir, mcpBenchMemories)
	ctx := context.Background()

	cmd := exec.Command(bin, "mcp", "--data-dir", dir)
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	p, err := startServe(bin, dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.kill()
	api := &httpapi.Client{BaseURL: p.URL, HTTP: &http.Client{Timeout: 30 * time.Second}}

	query := func(i int) string {
		w := mcpBenchWords
		return w[i%len(w)] + " " + w[(i*5+1)%len(w)]
	}
	mcpCall := func(tool string, args func(i int) map[string]any) func(b *testing.B) {
		return func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args(i)})
				lat = append(lat, time.Since(start))
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %v", tool, err, res)
				}
			}
			reportLatency(b, lat)
		}
	}
	b.Run("mcp-stdio/search", mcpCall("search", func(i int) map[string]any { return map[string]any{"query": query(i), "kind": "memory"} }))
	b.Run("http-api/search", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			hits, err := api.Search(ctx, imprint.SearchQuery{Scope: imprint.DefaultScope(), Text: query(i), Kinds: []imprint.Kind{imprint.KindMemory}, Limit: imprint.DefaultSearchLimit})
			lat = append(lat, time.Since(start))
			if err != nil || len(hits) == 0 {
				b.Fatalf("search: %v (%d hits)", err, len(hits))
			}
		}
		reportLatency(b, lat)
	})
	b.Run("mcp-stdio/recall", mcpCall("recall", func(i int) map[string]any { return map[string]any{"query": "what about " + query(i) + "?"} }))
	b.Run("http-api/recall", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			_, err := api.Recall(ctx, imprint.RecallQuery{Scope: imprint.DefaultScope(), Text: "what about " + query(i) + "?"})
			lat = append(lat, time.Since(start))
			if err != nil {
				b.Fatalf("recall: %v", err)
			}
		}
		reportLatency(b, lat)
	})
}
