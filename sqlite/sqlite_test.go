package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/storetest"
)

func openTemp(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run[*sql.Tx](t, func(t *testing.T) imprint.Store {
		db := openTemp(t)
		return db
	})
}
