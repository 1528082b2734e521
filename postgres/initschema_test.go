package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/imprint-dev/imprint/internal/pgtest"
)

// initBody is the embedded 0001_init.sql.
func initBody(t *testing.T) string {
	t.Helper()
	b, err := migrationFiles.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// firstMigrations are the two first migrations: 0001 (after its own
// cut-off halves) and schema.sql (a new schema).
func firstMigrations(t *testing.T) []firstMigration {
	t.Helper()
	chain, err := chainInit()
	if err != nil {
		t.Fatal(err)
	}
	sch, err := schemaInit()
	if err != nil {
		t.Fatal(err)
	}
	return []firstMigration{chain, sch}
}

// TestInitParts checks that both first migrations split into their
// halves, every statement in exactly one of them, the trigram index of
// memories after the second, and that schema.sql stands for the
// migrations up to the last one.
func TestInitParts(t *testing.T) {
	for _, fm := range firstMigrations(t) {
		body := fm.body
		first, second, after, ok := initParts(body, fm.mark)
		if !ok {
			t.Fatalf("%s did not split: the first migration of a database runs on one connection", fm.name)
		}
		mark := "\nCOMMENT ON TABLE memories IS '" + fm.mark + "';\n"
		if !strings.HasSuffix(second, mark) {
			t.Fatalf("%s: the second half does not end with its mark: %q", fm.name, second[max(0, len(second)-200):])
		}
		rest := strings.TrimSuffix(second, mark)
		if !strings.HasPrefix(after, "CREATE INDEX memories_cjk ON") || strings.Count(after, ";") != 1 {
			t.Errorf("%s: after the second half: %q, want the one trigram index of memories", fm.name, after)
		}
		if len(first)+len(rest)+len(after) != len(body) {
			t.Errorf("%s: the halves hold %d bytes of the %d", fm.name, len(first)+len(rest)+len(after), len(body))
		}
		for _, want := range []string{"CREATE TABLE sessions", "CREATE TABLE messages", "CREATE TABLE episodes", "CREATE TABLE traces", "CREATE TEXT SEARCH"} {
			if !strings.Contains(first, want) || strings.Contains(rest, want) {
				t.Errorf("%s: %q is not in the first half alone", fm.name, want)
			}
		}
		seconds := []string{"CREATE TABLE memories", "CREATE TABLE llm_calls", "CREATE TABLE jobs", "CREATE TABLE api_keys"}
		if fm.name == "schema.sql" {
			seconds = append(seconds, "CREATE TABLE imprint_nodes", "CREATE TABLE load_mark")
		}
		for _, want := range seconds {
			if !strings.Contains(rest, want) || strings.Contains(first, want) {
				t.Errorf("%s: %q is not in the second half alone", fm.name, want)
			}
		}
		if strings.Contains(rest, "gin_trgm_ops") || strings.Contains(rest, "imprint'") {
			t.Errorf("%s: the second half uses what the first creates (the trigram extension, the text search configuration)", fm.name)
		}
	}
	ms, err := migrationNames()
	if err != nil {
		t.Fatal(err)
	}
	if sch := firstMigrations(t)[1]; sch.upTo != ms[len(ms)-1].version {
		t.Errorf("schema.sql stands for the migrations up to %04d, the last is %s: write it into schema.sql", sch.upTo, ms[len(ms)-1].name)
	}
}

// schemaShape lists what the schema at u holds: relations, columns with
// their positions, types, defaults, storage and compression, indexes, constraints,
// table options, comments and text search objects, with the schema's name
// left out.
func schemaShape(t *testing.T, u string) []string {
	t.Helper()
	ctx := context.Background()
	c := connectAt(t, u)
	defer c.Close(ctx)
	var schema string
	if err := c.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, `WITH n AS (SELECT oid FROM pg_namespace WHERE nspname = $1)
		SELECT 'rel ' || c.relname || ' ' || c.relkind::text FROM pg_class c, n WHERE c.relnamespace = n.oid
		UNION ALL SELECT 'col ' || c.relname || '.' || a.attname || ' ' || a.attnum || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' ||
			a.attnotnull::text || ' ' || COALESCE(pg_get_expr(d.adbin, d.adrelid), '') || ' ' || a.attstorage::text || ' ' || a.attcompression::text
			FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN n ON c.relnamespace = n.oid
			LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
			WHERE a.attnum > 0 AND NOT a.attisdropped
		UNION ALL SELECT 'idx ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN n ON c.relnamespace = n.oid
		UNION ALL SELECT 'con ' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
			FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN n ON c.relnamespace = n.oid
		UNION ALL SELECT 'opt ' || c.relname || ' ' || array_to_string(c.reloptions, ',') FROM pg_class c, n
			WHERE c.relnamespace = n.oid AND c.reloptions IS NOT NULL
		UNION ALL SELECT 'comment ' || c.relname || ' ' || d.description FROM pg_description d
			JOIN pg_class c ON c.oid = d.objoid AND d.classoid = 'pg_class'::regclass JOIN n ON c.relnamespace = n.oid
		UNION ALL SELECT 'tsconfig ' || cfgname FROM pg_ts_config, n WHERE cfgnamespace = n.oid
		UNION ALL SELECT 'tsmap ' || cfgname || ' ' || m.maptokentype || ' ' || m.mapseqno || ' ' || d.dictname
			FROM pg_ts_config_map m JOIN pg_ts_config f ON f.oid = m.mapcfg JOIN pg_ts_dict d ON d.oid = m.mapdict, n
			WHERE f.cfgnamespace = n.oid
		UNION ALL SELECT 'tsdict ' || dictname || ' ' || COALESCE(dictinitoption, '') FROM pg_ts_dict, n WHERE dictnamespace = n.oid
		UNION ALL SELECT 'migration ' || version || ' ' || name FROM imprint_migrations
		ORDER BY 1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		l = strings.ReplaceAll(l, schema+".", "")
		lines[i] = strings.ReplaceAll(l, "public.", "")
	}
	// The pg_toast relation names carry the table's oid.
	return slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "rel pg_toast") })
}

// withParam returns u with the query parameter k=v.
func withParam(t *testing.T, u, k, v string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query()
	q.Set(k, v)
	p.RawQuery = q.Encode()
	return p.String()
}

// openAt opens the store at u and closes it when the test ends.
func openAt(t *testing.T, u string) *DB {
	t.Helper()
	db, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// rawShape is the schema the embedded migrations make run as they are,
// each file whole, one after the other on one connection (as before the
// first was split).
func rawShape(t *testing.T) []string {
	t.Helper()
	u := pgtest.Schema(t)
	c := connectAt(t, u)
	defer c.Close(context.Background())
	ctx := context.Background()
	ms, err := migrationNames()
	if err != nil {
		t.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TABLE imprint_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`); err != nil {
			return err
		}
		for _, m := range ms {
			body, err := migrationFiles.ReadFile("migrations/" + m.name)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO imprint_migrations VALUES ($1, $2, now())`, m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return schemaShape(t, u)
}

// TestInitHalvesAtOnce checks that the first migration run as two halves
// at once, or one after the other on a pool of one connection, makes the
// schema the migration files make run whole, in a schema of the test
// database and in a new database (where the migration creates the trigram
// extension itself, invisible to the second half until it commits).
func TestInitHalvesAtOnce(t *testing.T) {
	want := rawShape(t)
	if len(want) < 200 {
		t.Fatalf("the migrations' schema has %d lines", len(want))
	}
	one := withParam(t, pgtest.Schema(t), "pool_max_conns", "1")
	openAt(t, one)
	if got := schemaShape(t, one); !slices.Equal(got, want) {
		t.Errorf("on one connection, the halves made another schema:\n%s", shapeDiff(want, got))
	}
	u := pgtest.Schema(t)
	db := openAt(t, u)
	if db.pool.Config().MaxConns < 2 {
		t.Fatalf("the default pool has %d connections", db.pool.Config().MaxConns)
	}
	if got := schemaShape(t, u); !slices.Equal(got, want) {
		t.Errorf("two halves at once made another schema:\n%s", shapeDiff(want, got))
	}

	nu := newDatabase(t)
	openAt(t, nu)
	if got := schemaShape(t, nu); !slices.Equal(got, want) {
		t.Errorf("in a new database, two halves at once made another schema:\n%s", shapeDiff(want, got))
	}
}

// TestInitAfterCrash checks that a migration cut off between the second
// half's commit and the first's (the second half in place, marked, no
// migration recorded) completes on the next Open, into the same schema:
// a half of 0001 (cut off by an earlier version) and one of schema.sql.
func TestInitAfterCrash(t *testing.T) {
	want := rawShape(t)
	for _, fm := range firstMigrations(t) {
		_, second, _, ok := initParts(fm.body, fm.mark)
		if !ok {
			t.Fatalf("%s did not split", fm.name)
		}
		for _, pool := range []string{"4", "1"} {
			u := withParam(t, pgtest.Schema(t), "pool_max_conns", pool)
			c := connectAt(t, u)
			if _, err := c.Exec(context.Background(), second); err != nil {
				t.Fatal(err)
			}
			c.Close(context.Background())
			openAt(t, u)
			if got := schemaShape(t, u); !slices.Equal(got, want) {
				t.Errorf("%s, pool of %s: after the cut-off migration:\n%s", fm.name, pool, shapeDiff(want, got))
			}
		}
	}
}

// TestInitOtherVersionHalf checks that the second half of a first
// migration cut off by another version of imprint (its mark names another
// schema.sql) fails Open with an error saying so, and that nothing is
// added to it: no first half, its mark left for that version.
func TestInitOtherVersionHalf(t *testing.T) {
	sch := firstMigrations(t)[1]
	other := fmt.Sprintf(schemaMark, "9999_later.sql")
	_, second, _, ok := initParts(sch.body, other)
	if !ok {
		t.Fatal("schema.sql did not split")
	}
	u := pgtest.Schema(t)
	c := connectAt(t, u)
	defer c.Close(context.Background())
	ctx := context.Background()
	if _, err := c.Exec(ctx, second); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, u)
	if err == nil || !strings.Contains(err.Error(), "another version of imprint") || !strings.Contains(err.Error(), "9999_later.sql") {
		t.Fatalf("Open = %v, want the error naming the other version's half", err)
	}
	var tables int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relnamespace = current_schema()::regnamespace
		AND relname IN ('sessions', 'messages', 'imprint_migrations')`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("%d of the first half's tables were created beside the other version's half", tables)
	}
	var mark string
	if err := c.QueryRow(ctx, `SELECT COALESCE(obj_description('memories'::regclass, 'pg_class'), '')`).Scan(&mark); err != nil {
		t.Fatal(err)
	}
	if mark != other {
		t.Errorf("the other version's half is marked %q, want %q still", mark, other)
	}
}

// TestInitMarkElsewhere checks that the mark of another schema later in
// the search path (another store of the same database) is not taken for
// this schema's: the whole first migration runs.
func TestInitMarkElsewhere(t *testing.T) {
	want := rawShape(t)
	_, second, _, ok := initParts(initBody(t), initMark)
	if !ok {
		t.Fatal("0001_init.sql did not split")
	}
	other := pgtest.Schema(t)
	c := connectAt(t, other)
	var otherSchema string
	if err := c.QueryRow(context.Background(), `SELECT current_schema()`).Scan(&otherSchema); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
	for _, pool := range []string{"4", "1"} {
		u := withParam(t, pgtest.Schema(t), "pool_max_conns", pool)
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		q := p.Query()
		path := q.Get("search_path")
		this, _, _ := strings.Cut(path, ",")
		q.Set("search_path", this+","+otherSchema+",public")
		p.RawQuery = q.Encode()
		u = p.String()
		openAt(t, u)
		if got := schemaShape(t, u); !slices.Equal(got, want) {
			t.Errorf("pool of %s, %s before %s in the search path:\n%s", pool, this, otherSchema, shapeDiff(want, got))
		}
	}
}

// TestInitForeignTables checks that a schema holding another application's
// table of one of imprint's names fails the migrations, as it always did,
// and leaves nothing of imprint's behind: neither half commits when the
// other fails (load_mark and imprint_nodes are in schema.sql's second
// half), and the second half, committed beside the first, is dropped when
// what runs after it fails (memories_cjk is the name of the trigram index
// created after the second half's commit).
func TestInitForeignTables(t *testing.T) {
	for _, table := range []string{"sessions", "memories", "api_keys", "load_mark", "imprint_nodes", "memories_cjk"} {
		for _, pool := range []string{"4", "1"} {
			u := withParam(t, pgtest.Schema(t), "pool_max_conns", pool)
			c := connectAt(t, u)
			ctx := context.Background()
			if _, err := c.Exec(ctx, `CREATE TABLE `+table+` (theirs integer)`); err != nil {
				t.Fatal(err)
			}
			_, err := Open(ctx, u)
			if err == nil || !strings.Contains(err.Error(), table) {
				t.Errorf("%s, pool of %s: Open = %v, want the error naming %s", table, pool, err, table)
			}
			var left []string
			rows, err := c.Query(ctx, `SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace
				AND relkind = 'r' ORDER BY relname`)
			if err == nil {
				left, err = pgx.CollectRows(rows, pgx.RowTo[string])
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(left, []string{table}) {
				t.Errorf("%s, pool of %s: tables left %v, want only theirs", table, pool, left)
			}
			c.Close(ctx)
		}
	}
}

// TestInitOneServerConnection checks that a role the server gives one
// connection (CONNECTION LIMIT 1, as a server near max_connections does)
// still migrates a new schema, the second half in the first transaction
// when no second connection opens.
func TestInitOneServerConnection(t *testing.T) {
	want := rawShape(t)
	ctx := context.Background()
	u := pgtest.Schema(t)
	admin := connectAt(t, u)
	defer admin.Close(ctx)
	var schema string
	if err := admin.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	role := "imprint_one_" + strings.TrimPrefix(schema, "imprint_test_")
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN CONNECTION LIMIT 1`,
		`GRANT CREATE, USAGE ON SCHEMA ` + schema + ` TO ` + role,
		`GRANT USAGE ON SCHEMA public TO ` + role,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		c := connectAt(t, u)
		defer c.Close(ctx)
		for _, q := range []string{`DROP OWNED BY ` + role + ` CASCADE`, `DROP ROLE ` + role} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.User = url.User(role)
	db, err := Open(ctx, p.String())
	if err != nil {
		t.Fatalf("Open as a role of one connection: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := schemaShape(t, u); !slices.Equal(got, want) {
		t.Errorf("as a role of one connection:\n%s", shapeDiff(want, got))
	}
}

// connectAt is one connection to u (with its search path).
func connectAt(t *testing.T, u string) *pgx.Conn {
	t.Helper()
	one, err := pgtest.WithoutPoolParams(u)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newDatabase creates a database in the test cluster, dropped when the
// test ends, and returns its URL.
func newDatabase(t *testing.T) string {
	t.Helper()
	base := pgtest.URL(t)
	admin := connectAt(t, base)
	defer admin.Close(context.Background())
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "imprint_init_" + hex.EncodeToString(b)
	if _, err := admin.Exec(context.Background(), `CREATE DATABASE `+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := connectAt(t, base)
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), `DROP DATABASE `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	p, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p.Path = "/" + name
	return p.String()
}

// shapeDiff lists the lines of want missing from got (-) and those of got
// not in want (+).
func shapeDiff(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
