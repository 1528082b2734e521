package postgres

import (
	"context"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

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
