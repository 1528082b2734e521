package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/pgtest"
	"github.com/imprint-dev/imprint/keyword"
	"github.com/imprint-dev/imprint/storetest"
)

// openTemp opens a store on a fresh schema, closed at the test's end.
func openTemp(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run[pgx.Tx](t, func(t *testing.T) imprint.Store { return openTemp(t) })
}

// TestConformancePGlite runs the conformance suite against PGlite
// (PostgreSQL 18 with pgvector) when IMPRINT_TEST_PGLITE names it
// (scripts/pglite.sh start prints the URL; .ci/run sets it). PGlite has
// one backend, which every connection shares, settings included: the
// stores of the suite are open one at a time (each holds the lock from
// Open to Close), each on its one connection.
func TestConformancePGlite(t *testing.T) {
	if os.Getenv("IMPRINT_TEST_PGLITE") == "" {
		t.Skip("IMPRINT_TEST_PGLITE is not set (scripts/pglite.sh start prints a URL)")
	}
	storetest.Run[pgx.Tx](t, func(t *testing.T) imprint.Store { return openPGlite(t) })
}

// TestNodeLeases checks the leases River's engine reads to tell a stopped
// node's running jobs from a live one's.
func TestNodeLeases(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	ctx := t.Context()
	if err := db.RenewLease(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := db.RenewLease(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `UPDATE imprint_nodes SET renewed_at = now() - interval '1 minute' WHERE id = 'b'`); err != nil {
		t.Fatal(err)
	}
	live, err := db.LiveNodes(ctx, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !live["a"] || live["b"] || len(live) != 1 {
		t.Errorf("live nodes = %v, want a only (b's lease lapsed)", live)
	}
	if err := db.RenewLease(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if live, _ = db.LiveNodes(ctx, 20*time.Second); !live["b"] {
		t.Errorf("b renewed its lease but is not live: %v", live)
	}
	if err := db.RenewLease(ctx, " "); err == nil {
		t.Error("a lease without a node id was taken")
	}
}

// TestOpenMigratesOnce opens several stores on one schema at once, as
// nodes starting together do: every one opens, and the migrations ran
// once.
func TestOpenMigratesOnce(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			db, err := Open(context.Background(), u)
			if err == nil {
				err = db.Ping(context.Background())
				db.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestOpenBadURL checks that a URL that does not parse is ErrInvalid, and
// an unreachable database ErrUnavailable, with the password left out.
func TestOpenBadURL(t *testing.T) {
	t.Parallel()
	_, err := Open(context.Background(), "postgres://u:secret@[::1")
	if !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("bad URL: %v, want ErrInvalid", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = Open(ctx, "postgres://u:secret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2")
	if !errors.Is(err, imprint.ErrUnavailable) {
		t.Errorf("unreachable database: %v, want ErrUnavailable", err)
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// TestCaptureTraceIDConflict checks that a new episode's traces, written in
// one statement, still report a trace id of another episode as a conflict
// naming it, and write nothing.
func TestCaptureTraceIDConflict(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	ctx := t.Context()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	ep := func(id string) imprint.Episode {
		return imprint.Episode{ID: id, Scope: scope, SessionID: "s", Status: imprint.EpisodeFinalized}
	}
	tr := func(id, key string) imprint.Trace {
		return imprint.Trace{ID: id, StepKey: key, UserText: "question " + key, AgentText: "answer " + key,
			VecSummary: []float32{1, 0}, Embedder: "test/2"}
	}
	if err := db.SaveCapture(ctx, ep("e1"), []imprint.Trace{tr("t1", "k1")}); err != nil {
		t.Fatal(err)
	}
	err := db.SaveCaptures(ctx, []imprint.Episode{ep("e2")}, [][]imprint.Trace{{tr("t2", "k1"), tr("t1", "k2")}})
	if !errors.Is(err, imprint.ErrConflict) || !strings.Contains(err.Error(), `"t1"`) {
		t.Fatalf("SaveCaptures with another episode's trace id: %v, want a conflict naming t1", err)
	}
	got, err := db.ListTraces(ctx, scope, imprint.TraceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "t1" || got[0].EpisodeID != "e1" || len(got[0].VecSummary) != 2 {
		t.Fatalf("traces after the conflict: %+v, want only t1 of e1", got)
	}
	if _, err := db.GetEpisode(ctx, scope, "e2"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("episode e2 after the conflict: %v, want not found", err)
	}
}

// TestSearchPrunesCommonTerms checks that a query with a rare and a common
// term, whose best hits the rare term decides, gets from the records of the
// rare term alone exactly the hits of ranking every match.
func TestSearchPrunesCommonTerms(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	ctx := t.Context()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	put := func(id, content string) {
		t.Helper()
		if err := db.PutMemory(ctx, imprint.Memory{ID: id, Scope: scope, Content: content, Type: imprint.MemoryEpisodic}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range pruneAbove + 100 {
		put(fmt.Sprintf("c%05d", i), fmt.Sprintf("the trip went well, trip number %d", i))
	}
	for i := range 30 {
		put(fmt.Sprintf("b%02d", i), fmt.Sprintf("a particular trip story %d", i))
		put(fmt.Sprintf("r%02d", i), fmt.Sprintf("particular detail %d of particular things", i))
	}
	put("z1", "zebra crossing on the trip")
	src := hitSources[imprint.KindMemory]
	for _, c := range []struct {
		query  string
		pruned bool // whether the rare term's records decide
	}{{"particular trip", true}, {"zebra trip", false}} {
		terms := keyword.Query(c.query)
		tot, err := db.totals(ctx, imprint.KindMemory, src)
		if err != nil {
			t.Fatal(err)
		}
		st, err := db.idfs(ctx, src, "words", terms.Words, terms.Trigram, tot)
		if err != nil {
			t.Fatal(err)
		}
		want := 20
		q := imprint.TextQuery{Scope: scope, Kind: imprint.KindMemory, Text: c.query}
		full, err := db.rankIndex(ctx, q, src, "words", terms.Words, terms.Trigram, st, func(int64) bool { return true }, want)
		if err != nil {
			t.Fatal(err)
		}
		rare, err := db.rankIndex(ctx, q, src, "words", terms.Words, terms.Trigram, st, func(n int64) bool { return n <= pruneAbove }, want)
		if err != nil {
			t.Fatal(err)
		}
		decided := len(rare) == want && rare[want-1].hit.Score > st.wordIDF[1]
		if decided != c.pruned {
			t.Fatalf("%q: the rare term's records decide: %v, want %v", c.query, decided, c.pruned)
		}
		got, err := db.searchIndex(ctx, q, src, "words", terms.Words, terms.Trigram, want)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(full) {
			t.Fatalf("%q: %d hits, ranking every match gives %d", c.query, len(got), len(full))
		}
		for i := range got {
			if got[i].hit.ID != full[i].hit.ID || got[i].hit.Score != full[i].hit.Score {
				t.Errorf("%q: hit %d is %s (%v), ranking every match gives %s (%v)", c.query, i,
					got[i].hit.ID, got[i].hit.Score, full[i].hit.ID, full[i].hit.Score)
			}
		}
	}
}

// TestTotalsFollowRetiredMemories: a large table's bm25 totals (kept
// between searches) are counted again once a tenth of its memories are
// forgotten, though the table's row count does not move (a retired memory
// stays a row): idf and avgdl are those of the live records, as on SQLite.
func TestTotalsFollowRetiredMemories(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	ctx := t.Context()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	const rows, retired = exactCountBelow + 100, (exactCountBelow + 100) / 10
	if err := putMemories(ctx, db, rows, func(i int) imprint.Memory {
		return imprint.Memory{ID: fmt.Sprintf("m%05d", i), Scope: scope, Content: fmt.Sprintf("the trip went well, trip number %d", i), Type: imprint.MemoryEpisodic}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE memories`); err != nil {
		t.Fatal(err)
	}
	src := hitSources[imprint.KindMemory]
	tot, err := db.totals(ctx, imprint.KindMemory, src)
	if err != nil {
		t.Fatal(err)
	}
	if tot.words.rows != rows {
		t.Fatalf("word index rows %d, want %d", tot.words.rows, rows)
	}
	for i := range retired {
		if _, err := db.RetireMemory(ctx, scope, fmt.Sprintf("m%05d", i), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// The server's write statistics reach other sessions within its idle
	// flush interval (10 s in PostgreSQL 15).
	deadline := time.Now().Add(30 * time.Second)
	for {
		tot, err = db.totals(ctx, imprint.KindMemory, src)
		if err != nil {
			t.Fatal(err)
		}
		if tot.words.rows == rows-retired || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if tot.words.rows != rows-retired {
		t.Errorf("word index rows %d after %d of %d memories were forgotten, want %d", tot.words.rows, retired, rows, rows-retired)
	}
}
