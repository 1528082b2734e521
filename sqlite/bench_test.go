package sqlite

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/benchtext"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/vector"
)

// Benchmarks run on file-backed databases with the production pragmas. The
// 10k and 100k fixtures are built once per process, on first use, so a
// plain `go test` never pays for them.

const (
	benchDim      = 384
	benchEmbedder = "bench/384"
)

var benchScope = imprint.Scope{Tenant: "bench", User: "bench", Agent: "bench"}

var (
	benchDirOnce sync.Once
	benchDir     string
	benchDirErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func benchTempDir(b *testing.B) string {
	benchDirOnce.Do(func() { benchDir, benchDirErr = os.MkdirTemp("", "imprint-sqlite-bench-") })
	if benchDirErr != nil {
		b.Fatal(benchDirErr)
	}
	return benchDir
}

func randomUnit(r *rand.Rand) []float32 {
	v := make([]float32, benchDim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return vector.Normalize(v)
}

type benchFixture struct {
	db    *DB
	texts []string
	err   error
}

var (
	fixtureMu sync.Mutex
	fixtures  = map[int]*benchFixture{}
)

// fixture returns a database holding n messages of real text, each with a
// random 384-dimensional vector, in sessions of 1000, built once per process.
func fixture(b *testing.B, n int) *benchFixture {
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if f, ok := fixtures[n]; ok {
		if f.err != nil {
			b.Fatal(f.err)
		}
		return f
	}
	f := &benchFixture{texts: benchtext.RealTexts(b)}
	fixtures[n] = f
	start := time.Now()
	ctx := context.Background()
	f.db, f.err = Open(ctx, filepath.Join(benchTempDir(b), fmt.Sprintf("fixture-%d.db", n)))
	if f.err != nil {
		b.Fatal(f.err)
	}
	r := rand.New(rand.NewPCG(1, uint64(n)))
	const batch = 1000
	for lo := 0; lo < n; lo += batch {
		msgs := make([]imprint.Message, 0, batch)
		for i := lo; i < min(lo+batch, n); i++ {
			role := imprint.RoleUser
			if i%2 == 1 {
				role = imprint.RoleAssistant
			}
			msgs = append(msgs, imprint.Message{ID: fmt.Sprintf("m%d", i), Role: role, Content: benchtext.Row(f.texts, i),
				Vec: randomUnit(r), Embedder: benchEmbedder})
		}
		if _, f.err = f.db.AppendMessages(ctx, benchScope, fmt.Sprintf("s%d", lo/batch), msgs); f.err != nil {
			b.Fatal(f.err)
		}
	}
	b.Logf("fixture of %d messages built in %s", n, time.Since(start).Round(time.Millisecond))
	return f
}

func BenchmarkVectorTopK(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			f := fixture(b, n)
			ctx := context.Background()
			r := rand.New(rand.NewPCG(7, 7))
			queries := make([][]float32, 64)
			for i := range queries {
				queries[i] = randomUnit(r)
			}
			q := imprint.VectorQuery{Scope: benchScope, Kind: imprint.KindMessage, Embedder: benchEmbedder, Limit: 10}
			q.Vector = queries[0]
			if hits, err := f.db.SearchVector(ctx, q); err != nil || len(hits) != 10 { // loads the index
				b.Fatalf("warm-up: %d hits, %v", len(hits), err)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				q.Vector = queries[i%len(queries)]
				if _, err := f.db.SearchVector(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSearchText(b *testing.B) {
	for _, kind := range []string{"uncommon", "common"} {
		b.Run(kind+"/100k", func(b *testing.B) {
			f := fixture(b, 100_000)
			ctx := context.Background()
			words := benchtext.QueryWords(f.texts, kind == "common", 40)
			if kind == "common" {
				words = words[:12]
			}
			queries := benchtext.TextQueries(words, 50)
			q := imprint.TextQuery{Scope: benchScope, Kind: imprint.KindMessage, Limit: 10}
			durs := make([]time.Duration, 0, 1024)
			hits := 0
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				q.Text = queries[i%len(queries)]
				start := time.Now()
				res, err := f.db.SearchText(ctx, q)
				durs = append(durs, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				hits += len(res)
			}
			b.StopTimer()
			slices.Sort(durs)
			pct := func(p float64) float64 {
				return float64(durs[int(math.Ceil(p*float64(len(durs))))-1].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
			b.ReportMetric(float64(hits)/float64(len(durs)), "hits/op")
			b.Logf("%s queries, e.g. %q, %q", kind, queries[0], queries[1])
		})
	}
}

// BenchmarkInsert appends batches of 1000 messages (rows, both keyword
// indexes and, in the vector case, the BLOB and the loaded vector index) to
// the 100k fixture. Every batch is committed and searchable when its call
// returns.
func BenchmarkInsert(b *testing.B) {
	for _, withVec := range []bool{false, true} {
		name := "fts/batch1000"
		if withVec {
			name = "fts+vec384/batch1000"
		}
		b.Run(name, func(b *testing.B) {
			f := fixture(b, 100_000)
			ctx := context.Background()
			r := rand.New(rand.NewPCG(9, 9))
			const batch = 1000
			var seq int
			prepared := func() []imprint.Message {
				msgs := make([]imprint.Message, batch)
				for i := range msgs {
					seq++
					msgs[i] = imprint.Message{ID: fmt.Sprintf("ins-%v-%d", withVec, seq), Role: imprint.RoleUser,
						Content: benchtext.Row(f.texts, seq*13)}
					if withVec {
						msgs[i].Vec, msgs[i].Embedder = randomUnit(r), benchEmbedder
					}
				}
				return msgs
			}
			rows := 0
			var spent time.Duration
			for b.Loop() {
				b.StopTimer()
				msgs := prepared()
				b.StartTimer()
				start := time.Now()
				res, err := f.db.AppendMessages(ctx, benchScope, fmt.Sprintf("insert-%v", withVec), msgs)
				spent += time.Since(start)
				if err != nil || len(res.Inserted) != batch {
					b.Fatalf("inserted %d, %v", len(res.Inserted), err)
				}
				rows += batch
			}
			b.ReportMetric(float64(rows)/spent.Seconds(), "rows/s")
		})
	}
}
