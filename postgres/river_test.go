package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/imprint-dev/imprint/internal/pgtest"
	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/schedule/rivertest"
)

// TestRiver runs the River engine's suite (schedule/rivertest) on the
// real PostgreSQL, through riverpgxv5 on the store's pool, as imprint
// serve runs its jobs there: River listening for inserts, the nodes'
// leases handing a crashed node's running jobs to the others.
func TestRiver(t *testing.T) {
	t.Parallel()
	rivertest.Run(t, riverBackend(pgtest.Schema, false))
}

// TestRiverPGlite runs the same suite on PGlite (PostgreSQL 18): one
// connection, so River polls instead of listening. The suite's cases run
// one at a time, each holding PGlite for itself (pgliteMu) while its
// stores are open, since PGlite's one backend shares its settings (the
// search path) between connections.
func TestRiverPGlite(t *testing.T) {
	base := os.Getenv("IMPRINT_TEST_PGLITE")
	if base == "" {
		t.Skip("IMPRINT_TEST_PGLITE is not set (scripts/pglite.sh start prints a URL)")
	}
	fresh := func(t testing.TB) string {
		pgliteMu.Lock()
		t.Cleanup(pgliteMu.Unlock)
		return pgtest.SchemaAt(t, base)
	}
	rivertest.Run(t, riverBackend(fresh, true))
}

// riverBackend opens stores on the schemas fresh makes, with River on
// riverpgxv5 as their job engine, each store a node of the schema's
// database.
func riverBackend(fresh func(testing.TB) string, serial bool) rivertest.Backend[pgx.Tx] {
	return rivertest.Backend[pgx.Tx]{
		Fresh:  func(t *testing.T) string { return fresh(t) },
		Serial: serial,
		Nodes:  true,
		Open: func(t *testing.T, url string, cfg schedule.RiverConfig, nodes func(schedule.Nodes) schedule.Nodes) (rivertest.Store[pgx.Tx], *schedule.River[pgx.Tx]) {
			t.Helper()
			db, err := Open(t.Context(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			cfg.Listen = db.CanListen()
			cfg.Nodes = schedule.Nodes(db)
			if nodes != nil {
				cfg.Nodes = nodes(db)
			}
			e, err := schedule.NewRiver(t.Context(), riverpgxv5.New(db.Pool()), db, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SetJobEngine(e); err != nil {
				t.Fatal(err)
			}
			return rivertest.Store[pgx.Tx]{
				ServiceStore: db,
				Begin:        func(ctx context.Context) (pgx.Tx, error) { return db.Pool().Begin(ctx) },
				Commit:       func(ctx context.Context, tx pgx.Tx) error { return tx.Commit(ctx) },
				Rollback:     func(ctx context.Context, tx pgx.Tx) error { return tx.Rollback(ctx) },
			}, e
		},
	}
}
