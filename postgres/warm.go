package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	imprint "github.com/imprint-dev/imprint"
)

// Warm readies the store for its first requests, as a long-running
// service (imprint serve) does before it reports healthy: it opens up to
// warmConns connections of the pool and, on each, loads the server's caches of the
// schema's tables and indexes and of the keyword text search
// configuration, then reads the keyword ranks table of the pool (see
// occurrences). A fresh PostgreSQL backend pays ~10–20 ms of catalog reads
// the first time it touches these relations, 2–9 ms on its first statement
// on each table: without this, the first requests and jobs of every node
// paid it on each connection the pool opened for them. Call it after the
// job engine's migrations, so that its tables are warmed too.
func (db *DB) Warm(ctx context.Context) error {
	if err := WarmPool(ctx, db.pool, `SELECT to_tsvector('imprint', 'warm')`); err != nil {
		return err
	}
	if _, err := db.occurrences(ctx, imprint.KindMemory, "words"); err != nil {
		return fmt.Errorf("warm store: keyword ranks: %w: %v", imprint.ErrUnavailable, err)
	}
	return nil
}

// warmConns is how many connections WarmPool opens at most: the store's
// pool on a 2-core machine (pgxpool's default, max(4, cores)), River's (3).
// A larger pool_max_conns is a ceiling the pool grows to under load, not a
// number of connections a node should hold from its start: opened all at
// once, it could take every connection the server allows from the other
// nodes.
const warmConns = 4

// warmTimeout bounds a warm-up: a table locked by another session (an
// ALTER TABLE, a VACUUM FULL) must not keep imprint serve from listening.
const warmTimeout = 10 * time.Second

// WarmPool opens up to warmConns connections of pool (its MaxConns when
// fewer) and runs on each a plan of every table of imprint's schema and
// River's (named in the migrations, river_*) in the connection's schema
// (current_schema), which loads the backend's caches of the tables and
// their indexes, then each of the extra statements (simple protocol,
// results discarded), all within warmTimeout. Pool connections stay open
// until idle for the pool's MaxConnIdleTime.
func WarmPool(ctx context.Context, pool *pgxpool.Pool, extra ...string) error {
	ctx, cancel := context.WithTimeout(ctx, warmTimeout)
	defer cancel()
	n := min(int(pool.Config().MaxConns), warmConns)
	conns := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range n {
		// Each Acquire opens a new connection while the others are held.
		c, err := pool.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("warm pool: %w: %v", imprint.ErrUnavailable, err)
		}
		conns = append(conns, c)
	}
	plan, err := tablesPlan(ctx, conns[0].Conn())
	if err != nil {
		return fmt.Errorf("warm pool: %w: %v", imprint.ErrUnavailable, err)
	}
	stmts := append([]string{}, extra...)
	if plan != "" {
		stmts = append([]string{plan}, stmts...)
	}
	for _, c := range conns {
		for _, s := range stmts {
			if _, err := c.Exec(ctx, s, pgx.QueryExecModeSimpleProtocol); err != nil {
				return fmt.Errorf("warm pool: %w: %v", imprint.ErrUnavailable, err)
			}
		}
	}
	return nil
}

// schemaTables are the tables imprint's migrations create.
var schemaTables = sync.OnceValue(func() []string {
	var out []string
	for _, m := range migrationSQL() {
		for _, g := range createTable.FindAllStringSubmatch(m, -1) {
			out = append(out, strings.ToLower(g[1]))
		}
	}
	return out
})

var createTable = regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)`)

// migrationSQL returns the text of every embedded migration.
func migrationSQL() []string {
	ms, err := migrationNames()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if b, err := fs.ReadFile(migrationFiles, "migrations/"+m.name); err == nil {
			out = append(out, string(b))
		}
	}
	return out
}

// tablesPlan returns an EXPLAIN of one scan of each of imprint's and
// River's tables in the connection's schema ("" when it has none):
// planning it opens each and its indexes in the backend. Other tables of a
// schema shared with another application are left alone.
func tablesPlan(ctx context.Context, c *pgx.Conn) (string, error) {
	rows, err := c.Query(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
		AND (c.relname = ANY($1::text[]) OR c.relname LIKE 'river\_%') ORDER BY c.relname`,
		pgx.QueryExecModeSimpleProtocol, schemaTables())
	if err != nil {
		return "", err
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var schema, name string
		err := r.Scan(&schema, &name)
		return pgx.Identifier{schema, name}.Sanitize(), err
	})
	if err != nil || len(tables) == 0 {
		return "", err
	}
	scans := make([]string, len(tables))
	for i, t := range tables {
		scans[i] = "SELECT 1 FROM " + t
	}
	return "EXPLAIN (COSTS OFF) " + strings.Join(scans, " UNION ALL "), nil
}
