package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	imprint "github.com/imprint-dev/imprint"
)

// jobPoolConns is the size of JobPool's pool: River's listener holds one,
// its fetches, completions, leader election and job listings share the
// others (each a few milliseconds).
const jobPoolConns = 3

// JobPool opens a pool of its own, on the store's database and schema, for
// a job engine's own statements (River's fetches, state updates and
// listings; its inserts go in the store's transactions): nil when the
// store has a single connection (PGlite), whose pool the engine must
// share. Its connections plan every prepared statement once, generically
// (plan_cache_mode force_generic_plan): River's statements are large CTEs
// of fixed shape over arrays, whose plan does not depend on the values,
// and PostgreSQL's default plans each one afresh for the first five
// executions on each connection, 2–6 ms each on this machine, a third of
// the server's planning time in a 3-node run. The caller closes it, after
// the engine stopped.
func (db *DB) JobPool(ctx context.Context) (*pgxpool.Pool, error) {
	if !db.CanListen() {
		return nil, nil
	}
	cfg := db.pool.Config()
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		// Its backends are told from the store's in pg_stat_activity.
		cfg.ConnConfig.RuntimeParams["application_name"] = "imprint-jobs"
	}
	cfg.MaxConns, cfg.MinConns = jobPoolConns, 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open job pool: %w: %v", imprint.ErrUnavailable, redactErr(err, db.url))
	}
	return pool, nil
}

// RenewLease records that node id is alive now (the database's clock), so
// that the other nodes leave its running jobs alone; leases lapsed for a
// day are removed.
func (db *DB) RenewLease(ctx context.Context, id string) error {
	if strings.TrimSpace(id) == "" {
		return imprint.Invalidf("node id is required")
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO imprint_nodes (id) VALUES ($1)
		ON CONFLICT (id) DO UPDATE SET renewed_at = now()`, id)
	if err == nil {
		_, err = db.pool.Exec(ctx, `DELETE FROM imprint_nodes WHERE renewed_at < now() - interval '1 day'`)
	}
	return dbErr("renew node lease", err)
}

// LiveNodes returns the ids of the nodes whose lease was renewed within
// the last ttl.
func (db *DB) LiveNodes(ctx context.Context, ttl time.Duration) (map[string]bool, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM imprint_nodes WHERE renewed_at > now() - $1::interval`, ttl)
	if err != nil {
		return nil, dbErr("live nodes", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, dbErr("live nodes", err)
		}
		out[id] = true
	}
	return out, dbErr("live nodes", rows.Err())
}
