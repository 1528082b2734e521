package schedule

import (
	"database/sql"
	"testing"

	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/imprint-dev/imprint/sqlite"
)

// openRiver opens a SQLite store at path with a River engine installed as
// its job engine.
func openRiver(t *testing.T, path string, cfg Config) (*sqlite.DB, *River[*sql.Tx]) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	e, err := NewRiver(t.Context(), riversqlite.New(db.WriterDB()), db, RiverConfig{Config: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetJobEngine(e); err != nil {
		t.Fatal(err)
	}
	return db, e
}
