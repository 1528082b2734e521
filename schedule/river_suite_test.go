package schedule_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/imprint-dev/imprint/schedule"
	"github.com/imprint-dev/imprint/schedule/rivertest"
	"github.com/imprint-dev/imprint/sqlite"
)

// TestRiverSQLite runs the River engine's suite on the SQLite store
// (riversqlite on its writer pool). The PostgreSQL store runs the same
// suite from its own tests (riverpgxv5).
func TestRiverSQLite(t *testing.T) {
	t.Parallel()
	rivertest.Run(t, rivertest.Backend[*sql.Tx]{
		Fresh: func(t *testing.T) string { return filepath.Join(t.TempDir(), "imprint.db") },
		Open: func(t *testing.T, path string, cfg schedule.RiverConfig, _ func(schedule.Nodes) schedule.Nodes) (rivertest.Store[*sql.Tx], *schedule.River[*sql.Tx]) {
			t.Helper()
			db, err := sqlite.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			e, err := schedule.NewRiver(t.Context(), riversqlite.New(db.WriterDB()), db, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SetJobEngine(e); err != nil {
				t.Fatal(err)
			}
			return rivertest.Store[*sql.Tx]{
				ServiceStore: db,
				Begin:        func(ctx context.Context) (*sql.Tx, error) { return db.WriterDB().BeginTx(ctx, nil) },
				Commit:       func(_ context.Context, tx *sql.Tx) error { return tx.Commit() },
				Rollback:     func(_ context.Context, tx *sql.Tx) error { return tx.Rollback() },
			}, e
		},
	})
}
