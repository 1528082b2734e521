package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/storetest"
)

// testURL is the database the tests use (scripts/postgres.sh start prints
// one; scripts/test.sh starts it and sets IMPRINT_TEST_POSTGRES). Without
// it the tests skip, except under CI=true, where they fail.
func testURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("IMPRINT_TEST_POSTGRES")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("IMPRINT_TEST_POSTGRES is not set: scripts/test.sh starts PostgreSQL (scripts/postgres.sh) and sets it")
		}
		t.Skip("IMPRINT_TEST_POSTGRES is not set (scripts/postgres.sh start prints a URL)")
	}
	return u
}

// schemaURL returns base with the search path set to schema, then public
// (where the extensions live).
func schemaURL(t testing.TB, base, schema string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String()
}

// freshSchema makes an empty schema of its own for one test, dropped at
// its end, and returns the URL that uses it: tests running at once never
// share tables.
func freshSchema(t testing.TB) string {
	t.Helper()
	base := testURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", base, err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "imprint_test_" + hex.EncodeToString(b)
	for _, q := range []string{`CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`, `CREATE SCHEMA ` + schema} {
		if _, err := conn.Exec(ctx, q); err != nil && !isUnique(err) {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schemaURL(t, base, schema)
}

// openTemp opens a store on a fresh schema, closed at the test's end.
func openTemp(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run[pgx.Tx](t, func(t *testing.T) imprint.Store { return openTemp(t) })
}
