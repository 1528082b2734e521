package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/pgtest"
	"github.com/imprint-dev/imprint/vector"
)

// TestVectorTierWithoutPgvector checks that PostgreSQL 15 without the
// extension searches vectors by the exact scan and says so.
func TestVectorTierWithoutPgvector(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	if db.vec.version != "" {
		t.Skipf("this server has pgvector %s", db.vec.version)
	}
	if got := db.VectorSearch(); !strings.Contains(got, "exact scoped cosine scan") {
		t.Errorf("VectorSearch() = %q, want the exact scan named", got)
	}
}

// pgliteMu keeps the PGlite tests' stores one at a time: PGlite has one
// backend, which every connection shares, settings (the search path)
// included, so a store holds it from Open to Close.
var pgliteMu sync.Mutex

// openPGlite opens a store on a fresh schema of PGlite, skipping without
// IMPRINT_TEST_PGLITE.
func openPGlite(t *testing.T) *DB {
	t.Helper()
	base := os.Getenv("IMPRINT_TEST_PGLITE")
	if base == "" {
		t.Skip("IMPRINT_TEST_PGLITE is not set (scripts/pglite.sh start prints a URL)")
	}
	pgliteMu.Lock()
	db, err := Open(context.Background(), pgtest.SchemaAt(t, base))
	if err != nil {
		pgliteMu.Unlock()
		t.Fatal(err)
	}
	db.onClose = pgliteMu.Unlock
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestVectorIndexPGlite checks the pgvector tier on PGlite: the store
// finds pgvector 0.8, builds an HNSW cosine index for the embedder, the
// planner reads it for a scoped nearest-neighbour query, and a scope
// holding a small share of the vectors still gets its k nearest (the
// iterative scan goes on past the other scope's rows).
func TestVectorIndexPGlite(t *testing.T) {
	db := openPGlite(t)
	ctx := t.Context()
	if db.vec.version == "" {
		t.Fatal("PGlite ships pgvector, but the store found none")
	}
	if got := db.VectorSearch(); !strings.Contains(got, "HNSW") {
		t.Errorf("VectorSearch() = %q, want the HNSW tier named", got)
	}
	const dim = 8
	r := rand.New(rand.NewPCG(1, 2))
	near := func(spread float64) []float32 {
		v := make([]float32, dim)
		v[0] = 1
		for i := range v {
			v[i] += float32(spread * r.NormFloat64())
		}
		return vector.Normalize(v)
	}
	other := imprint.Scope{Tenant: "acme", User: "bob", Agent: "claude"}
	mine := imprint.Scope{Tenant: "acme", User: "alice", Agent: "claude"}
	put := func(scope imprint.Scope, id string, v []float32) {
		m := imprint.Memory{ID: id, Scope: scope, Content: "memory " + id, Type: imprint.MemoryEpisodic, Vec: v, Embedder: "e/8"}
		if err := db.PutMemory(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The scope asked for holds most of the vectors: 600 crowd the
	// query's neighbourhood, 15 are a little farther out, 10,000 far
	// away; another scope holds a few more.
	// 10,000 far away, written in one statement (before the first
	// vector the store writes builds the index), so the planner prefers
	// the index to sorting the scope.
	if _, err := db.pool.Exec(ctx, `INSERT INTO memories (id, tenant, user_id, agent, content, type, created_at, updated_at,
		words, vec, embedder, dim)
		SELECT 'f' || i, 'acme', 'alice', 'claude', 'far', 'episodic', now(), now(), to_tsvector('imprint', 'far'),
			ARRAY[-1, random(), random(), random(), random(), random(), random(), random()]::real[], 'e/8', 8
		FROM generate_series(1, 10000) i`); err != nil {
		t.Fatal(err)
	}
	var crowd []string
	for i := range 600 {
		id := fmt.Sprintf("c%03d", i)
		put(mine, id, near(0.05))
		crowd = append(crowd, id)
	}
	want := map[string]float64{}
	q := near(0)
	for i := range 15 {
		v := near(0.3)
		id := fmt.Sprintf("m%02d", i)
		put(mine, id, v)
		want[id] = cosine(q, v)
	}
	for i := range 20 {
		put(other, fmt.Sprintf("o%02d", i), near(0.01))
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE memories`); err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := db.pool.Query(ctx, `EXPLAIN SELECT x.rid FROM memories x WHERE x.tenant = 'acme' AND x.user_id = 'alice'
		AND x.agent = 'claude' AND x.superseded_by IS NULL AND x.forgotten_at IS NULL AND x.embedder = 'e/8' AND x.dim = 8
		AND x.vec IS NOT NULL ORDER BY (x.vec::vector(8)) <=> ('{1,0,0,0,0,0,0,0}'::real[])::vector(8) LIMIT 10`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	rows.Close()
	if !strings.Contains(strings.Join(plan, "\n"), hnswIndexName("memories", "vec", "e/8", dim)) {
		t.Errorf("the scoped nearest-neighbour query does not read the HNSW index:\n%s", strings.Join(plan, "\n"))
	}
	// Leaving out the 600 nearest leaves the 15 farther ones: the scan
	// goes on past the first candidates the filter drops.
	hits, err := db.SearchVector(ctx, imprint.VectorQuery{Scope: mine, Kind: imprint.KindMemory, Vector: q, Embedder: "e/8",
		Limit: 10, ExcludeIDs: crowd})
	if err != nil {
		t.Fatal(err)
	}
	// HNSW is approximate: the scan must still return k hits of the
	// scope, none excluded, best first, nearly all of the exact k.
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return want[ids[i]] > want[ids[j]] })
	exact := map[string]bool{}
	for _, id := range ids[:10] {
		exact[id] = true
	}
	found := 0
	for i, h := range hits {
		if _, ok := want[h.ID]; !ok {
			t.Errorf("hit %s is not one of the scope's vectors left", h.ID)
		}
		if exact[h.ID] {
			found++
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("hits not best first: %v then %v", hits[i-1].Score, h.Score)
		}
	}
	if len(hits) != 10 || found < 8 {
		t.Errorf("top 10 without the crowd: %d hits, %d of the exact 10 (want 10 hits, at least 8)", len(hits), found)
	}
}

// TestVectorIndexBuiltAtOpenPGlite checks that vectors stored without an
// index (written before pgvector was there) get their HNSW index when a
// store opens the database: adding the extension only builds indexes.
func TestVectorIndexBuiltAtOpenPGlite(t *testing.T) {
	db := openPGlite(t)
	ctx := t.Context()
	m := imprint.Memory{ID: "m1", Scope: imprint.DefaultScope(), Content: "memory", Type: imprint.MemoryPersona,
		Vec: []float32{1, 0, 0}, Embedder: "e/3"}
	if err := db.PutMemory(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	name := hnswIndexName("memories", "vec", "e/3", 3)
	exists := func() bool {
		var ok bool
		if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = $1)`, name).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !exists() {
		t.Fatalf("no HNSW index %s after a vector was written", name)
	}
	if _, err := db.pool.Exec(ctx, `DROP INDEX `+name); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, db.url)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if !exists() {
		t.Errorf("opening the store did not build the index of the stored vectors")
	}
}
