package capture

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/embedding"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/sqlite"
)

// benchEpisodes gives every iteration a fresh episode id, so each capture
// inserts new rows instead of re-upserting the same ones.
func benchEpisode(eps []imprint.Episode, i int) imprint.Episode {
	ep := eps[i%len(eps)]
	ep.ID = ep.ID + "-" + strconv.Itoa(i)
	return ep
}

func reportCapture(b *testing.B, traces int) {
	s := b.Elapsed().Seconds()
	if s <= 0 {
		return
	}
	b.ReportMetric(float64(b.N)/s, "episodes/s")
	b.ReportMetric(float64(traces)/s, "traces/s")
	b.ReportMetric(float64(traces)/float64(b.N), "traces/episode")
}

// BenchmarkCaptureTauBenchNoLLM captures the 40 τ-bench episodes (one per
// iteration, cycling) into a file-backed SQLite store with the hash
// embedder: steps, FTS rows and two vectors per trace.
func BenchmarkCaptureTauBenchNoLLM(b *testing.B) {
	eps := tauEpisodes(b)
	db := openDB(b)
	r := NewRunner(Deps{Store: db, Embedder: embedding.NewHash()}, DefaultConfig())
	benchNoLLM(b, r, eps)
}

// BenchmarkCaptureTauBenchNoStore is the no-LLM capture without saving
// (Deps.Store nil): capture's own stages, embedding included.
func BenchmarkCaptureTauBenchNoStore(b *testing.B) {
	eps := tauEpisodes(b)
	r := NewRunner(Deps{Embedder: embedding.NewHash()}, DefaultConfig())
	benchNoLLM(b, r, eps)
}

func benchNoLLM(b *testing.B, r *Runner, eps []imprint.Episode) {
	ctx := context.Background()
	traces := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res, err := r.Run(ctx, benchEpisode(eps, i), "")
		if err != nil {
			b.Fatal(err)
		}
		traces += len(res.Traces)
	}
	reportCapture(b, traces)
}

// BenchmarkCaptureTauBenchLLM captures the τ-bench episodes through the
// fake provider (computed replies, no network latency) in each batch mode,
// with synthesis and α scoring on, and reports the LLM calls and prompt
// tokens spent per episode.
func BenchmarkCaptureTauBenchLLM(b *testing.B) {
	eps := tauEpisodes(b)
	for _, mode := range []string{BatchPerStep, BatchPerEpisode, BatchAuto} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			db := openDB(b)
			srv := llmtest.NewServer(b)
			srv.Handle(OpBatch, echoBatch(b))
			srv.Script(OpSynth, llmtest.Text("I looked the reservation up first because every change depends on its cabin and payment."))
			srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.6, "usable": true, "reason": "concrete"}))
			rec := &llm.MemoryRecorder{}
			m := llmtest.NewClient(b, srv, llmtest.FormatOpenAI, func(o *llm.Options) { o.Recorder = rec; o.Concurrency = 8 })
			cfg := config(func(c *Config) { c.BatchMode, c.SynthReflections = mode, true })
			r := NewRunner(Deps{Store: db, LLM: m, Embedder: embedding.NewHash()}, cfg)
			traces, calls, small, smallCalls := 0, 0, 0, 0
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				res, err := r.Run(ctx, benchEpisode(eps, i), "")
				if err != nil {
					b.Fatal(err)
				}
				traces += len(res.Traces)
				calls += res.LLMCalls.Total()
				if len(res.Traces) <= cfg.BatchThreshold {
					small++
					smallCalls += res.LLMCalls.Total()
				}
			}
			reportCapture(b, traces)
			tokens := 0
			for _, u := range rec.Usage() {
				tokens += u.PromptTokens
			}
			b.ReportMetric(float64(calls)/float64(b.N), "llm_calls/episode")
			b.ReportMetric(float64(tokens)/float64(b.N), "prompt_tokens/episode")
			if small > 0 {
				b.ReportMetric(float64(smallCalls)/float64(small), "llm_calls/small_episode")
			}
		})
	}
}

// bench100kRows is the number of traces already in the store for
// BenchmarkCaptureTauBenchNoLLM100k.
const bench100kRows = 100_000

// BenchmarkCaptureTauBenchNoLLM100k is the no-LLM benchmark on a store that
// already holds 100k traces (with FTS rows and vectors). The populated file
// is built once and cached in the OS temp dir; each run works on a copy.
func BenchmarkCaptureTauBenchNoLLM100k(b *testing.B) {
	eps := tauEpisodes(b)
	cached := filepath.Join(os.TempDir(), fmt.Sprintf("imprint-capture-bench-%dk-v1.db", bench100kRows/1000))
	if _, err := os.Stat(cached); err != nil {
		if err := build100k(b, cached, eps); err != nil {
			os.Remove(cached)
			b.Fatal(err)
		}
	}
	path := filepath.Join(b.TempDir(), "imprint.db")
	if err := copyFile(cached, path); err != nil {
		b.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	r := NewRunner(Deps{Store: db, Embedder: embedding.NewHash()}, DefaultConfig())
	benchNoLLM(b, r, eps)
}

// build100k fills a new store at path with bench100kRows traces captured
// from the τ-bench episodes under fresh ids.
func build100k(b *testing.B, path string, eps []imprint.Episode) error {
	b.Logf("building %s (once)", path)
	ctx := context.Background()
	tmp := path + ".tmp"
	os.Remove(tmp)
	db, err := sqlite.Open(ctx, tmp)
	if err != nil {
		return err
	}
	r := NewRunner(Deps{Store: db, Embedder: embedding.NewHash()}, DefaultConfig())
	rows := 0
	for i := 0; rows < bench100kRows; i++ {
		ep := benchEpisode(eps, i)
		ep.ID = "seed-" + ep.ID
		res, err := r.Run(ctx, ep, "")
		if err != nil {
			db.Close()
			return err
		}
		rows += len(res.Traces)
	}
	if err := db.Close(); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(tmp + suffix)
	}
	return os.Rename(tmp, path)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
