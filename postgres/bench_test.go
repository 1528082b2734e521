package postgres

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/benchtext"
	"github.com/imprint-dev/imprint/internal/pgtest"
	"github.com/imprint-dev/imprint/sqlite"
)

// The store benchmarks run the PostgreSQL store and, as the baseline in
// the same process and sitting, the SQLite store on the same rows: 100k
// memories of the shared test data's real texts.

var benchScope = imprint.Scope{Tenant: "bench", User: "bench", Agent: "bench"}

const benchRows = 100_000

type benchStore struct {
	st    imprint.Store
	texts []string
	err   error
}

var (
	benchMu     sync.Mutex
	benchStores = map[string]*benchStore{}
)

// benchFixture returns the store of kind (sqlite or postgres) holding
// benchRows memories, built once per process with 8 writers; it lasts as
// long as the top benchmark owner (its sub-benchmarks share it).
func benchFixture(b, owner *testing.B, kind string) *benchStore {
	benchMu.Lock()
	defer benchMu.Unlock()
	if f, ok := benchStores[kind]; ok {
		if f.err != nil {
			b.Fatal(f.err)
		}
		return f
	}
	f := &benchStore{texts: benchtext.RealTexts(b)}
	benchStores[kind] = f
	ctx := context.Background()
	switch kind {
	case "sqlite":
		db, err := sqlite.Open(ctx, filepath.Join(owner.TempDir(), "bench.db"))
		f.st, f.err = db, err
	default:
		u, kept := benchSchema(owner)
		db, err := Open(ctx, u)
		f.st, f.err = db, err
		if err == nil && kept {
			var n int
			if f.err = db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM memories`).Scan(&n); f.err == nil && n >= benchRows {
				b.Logf("postgres fixture: %d memories kept in %s", n, os.Getenv(benchKeepEnv))
				return f
			}
			if f.err == nil && n > 0 {
				f.err = fmt.Errorf("kept schema %s holds %d memories, not %d: drop it", os.Getenv(benchKeepEnv), n, benchRows)
			}
		}
	}
	if f.err != nil {
		b.Fatal(f.err)
	}
	start := time.Now()
	if f.err = putMemories(ctx, f.st, benchRows, func(i int) imprint.Memory {
		return imprint.Memory{ID: fmt.Sprintf("m%06d", i), Scope: benchScope, SessionID: fmt.Sprintf("s%03d", i/1000),
			Content: benchtext.Row(f.texts, i), Type: imprint.MemoryEpisodic, Priority: 60}
	}); f.err != nil {
		b.Fatal(f.err)
	}
	b.Logf("%s fixture: %d memories in %v", kind, benchRows, time.Since(start).Round(time.Millisecond))
	if db, ok := f.st.(*DB); ok {
		// What autovacuum does within a minute of the bulk load (the
		// insert threshold): the visibility map, the planner's
		// statistics, and the keyword index's pending list merged. Left
		// to autovacuum it ran during the measurements, on the same two
		// cores; a store that grew to 100k memories has been vacuumed.
		start := time.Now()
		if _, f.err = db.pool.Exec(ctx, `VACUUM (ANALYZE) memories`); f.err != nil {
			b.Fatal(f.err)
		}
		b.Logf("postgres fixture: VACUUM (ANALYZE) in %v", time.Since(start).Round(time.Millisecond))
	}
	return f
}

// benchKeepEnv names a schema of the test database in which the
// PostgreSQL fixture is built once and kept between runs (building it
// takes a minute or more); unset, each run builds it in a throwaway schema.
const benchKeepEnv = "IMPRINT_BENCH_SCHEMA"

// benchSchema returns the URL of the fixture's schema and whether it is
// the kept one.
func benchSchema(b *testing.B) (string, bool) {
	name := os.Getenv(benchKeepEnv)
	if name == "" {
		return pgtest.Schema(b), false
	}
	base := pgtest.URL(b)
	conn, err := pgx.Connect(context.Background(), base)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	_, _ = conn.Exec(context.Background(), `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`)
	if _, err := conn.Exec(context.Background(), `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{name}.Sanitize()); err != nil {
		b.Fatal(err)
	}
	u, err := pgtest.WithSearchPath(base, name)
	if err != nil {
		b.Fatal(err)
	}
	return u, true
}

// putMemories puts memories 0 to n-1 (made by mk) into st with 8 writers.
func putMemories(ctx context.Context, st imprint.Store, n int, mk func(i int) imprint.Memory) error {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := st.PutMemory(ctx, mk(i), nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func benchKinds(b *testing.B) []string {
	if os.Getenv(pgtest.EnvURL) == "" {
		return []string{"sqlite"}
	}
	return []string{"sqlite", "postgres"}
}

// BenchmarkStores/KIND/keyword-{uncommon,common}/100k: keyword search of
// memories at 100k with 2-3-term queries of rare words (in 2 source texts)
// or of the most frequent ones, p50 and p95. insert/100k: one memory per
// transaction into the 100k store (row, keyword index), inserts/s.
func BenchmarkStores(b *testing.B) {
	owner := b
	for _, kind := range benchKinds(b) {
		for _, words := range []string{"uncommon", "common"} {
			b.Run(kind+"/keyword-"+words+"/100k", func(b *testing.B) {
				f := benchFixture(b, owner, kind)
				ctx := context.Background()
				ws := benchtext.QueryWords(f.texts, words == "common", 40)
				if words == "common" {
					ws = ws[:12]
				}
				queries := benchtext.TextQueries(ws, 50)
				q := imprint.TextQuery{Scope: benchScope, Kind: imprint.KindMemory, Limit: 10}
				durs := make([]time.Duration, 0, 1024)
				hits := 0
				for i := 0; b.Loop(); i++ {
					q.Text = queries[i%len(queries)]
					start := time.Now()
					res, err := f.st.SearchText(ctx, q)
					durs = append(durs, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					hits += len(res)
				}
				slices.Sort(durs)
				pct := func(p float64) float64 {
					return float64(durs[int(math.Ceil(p*float64(len(durs))))-1].Microseconds()) / 1000
				}
				b.ReportMetric(pct(0.50), "p50-ms")
				b.ReportMetric(pct(0.95), "p95-ms")
				b.ReportMetric(float64(hits)/float64(len(durs)), "hits/op")
			})
		}
		b.Run(kind+"/insert/100k", func(b *testing.B) {
			f := benchFixture(b, owner, kind)
			ctx := context.Background()
			n := 0
			var spent time.Duration
			for b.Loop() {
				m := imprint.Memory{ID: fmt.Sprintf("ins-%d", n), Scope: benchScope, SessionID: "ins",
					Content: benchtext.Row(f.texts, n*13+7), Type: imprint.MemoryEpisodic, Priority: 60}
				start := time.Now()
				if err := f.st.PutMemory(ctx, m, nil); err != nil {
					b.Fatal(err)
				}
				spent += time.Since(start)
				n++
			}
			b.ReportMetric(float64(n)/spent.Seconds(), "inserts/s")
		})
	}
}
