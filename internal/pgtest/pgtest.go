// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema of the database named by IMPRINT_TEST_POSTGRES (scripts/test.sh
// starts a throwaway cluster with scripts/postgres.sh and sets it),
// dropped when the test ends. Without the variable the tests skip, except
// under CI=true, where they fail.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvURL is the variable naming the test database.
const EnvURL = "IMPRINT_TEST_POSTGRES"

// URL returns the test database's URL, skipping the test (failing it
// under CI=true) when none is set.
func URL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal(EnvURL + " is not set: scripts/test.sh starts PostgreSQL (scripts/postgres.sh) and sets it")
		}
		tb.Skip(EnvURL + " is not set (scripts/postgres.sh start prints a URL)")
	}
	return u
}

// WithSearchPath returns base with the search path set to schema, then
// public (where the extensions live).
func WithSearchPath(base, schema string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Schema makes an empty schema of its own for the test in the test
// database (URL), dropped at its end, and returns the URL that uses it:
// tests running at once never share tables. The extensions the store
// needs are made in public first.
func Schema(tb testing.TB) string {
	tb.Helper()
	return SchemaAt(tb, URL(tb))
}

// SchemaAt is Schema in the database at base (whose pool settings, such
// as pool_max_conns, the returned URL keeps).
func SchemaAt(tb testing.TB, base string) string {
	tb.Helper()
	return schemaAt(tb, base, true)
}

// KeptSchema is Schema left in place when the benchmark ends, for the
// throwaway cluster's teardown (scripts/postgres.sh stop) to remove: a
// benchmark that times creating tables in a fresh schema must not time
// the file system's recovery from its own drops. Dropping a schema
// deletes the ~90 files of its tables and indexes, and ext4 then skips
// those recently freed inodes one by one for every file it creates for
// a minute or more (perf during a migration right after such drops: a
// fifth of the samples in ext4's find_inode_bit and recently_deleted;
// its DDL 139-153 ms there against 50-60 ms on a cluster without
// deletions), which a database meeting its first import does not pay.
func KeptSchema(tb testing.TB) string {
	tb.Helper()
	return schemaAt(tb, URL(tb), false)
}

func schemaAt(tb testing.TB, base string, drop bool) string {
	tb.Helper()
	admin, err := WithoutPoolParams(base)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("connect to the test database: %v", err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "imprint_test_" + hex.EncodeToString(b)
	// Two tests creating the extension at once may race: the loser's
	// error is harmless, the extension exists.
	_, _ = conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	if drop {
		tb.Cleanup(func() {
			c, err := pgx.Connect(context.Background(), admin)
			if err != nil {
				tb.Errorf("drop schema %s: %v", schema, err)
				return
			}
			defer c.Close(context.Background())
			if _, err := c.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`); err != nil {
				tb.Errorf("drop schema %s: %v", schema, err)
			}
		})
	}
	u, err := WithSearchPath(base, schema)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// WithoutPoolParams returns u without pgxpool's pool_* parameters, which a
// single connection would send to the server as settings.
func WithoutPoolParams(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	q := p.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	p.RawQuery = q.Encode()
	return p.String(), nil
}
