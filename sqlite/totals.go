package sqlite

import (
	"context"

	imprint "github.com/imprint-dev/imprint"
)

// Totals counts live memories by type, traces, messages and sessions over
// every scope, in one read transaction so the numbers agree.
func (db *DB) Totals(ctx context.Context) (imprint.Totals, error) {
	tot := imprint.Totals{Memories: map[imprint.MemoryType]int{}}
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return tot, dbErr("totals", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM traces), (SELECT COUNT(*) FROM messages),
		(SELECT COUNT(*) FROM sessions)`).Scan(&tot.Traces, &tot.Messages, &tot.Sessions); err != nil {
		return tot, dbErr("totals", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT type, COUNT(*) FROM memories WHERE superseded_by IS NULL AND forgotten_at IS NULL GROUP BY type`)
	if err != nil {
		return tot, dbErr("totals memories", err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ string
		var n int
		if err := rows.Scan(&typ, &n); err != nil {
			return tot, dbErr("totals memories", err)
		}
		tot.Memories[imprint.MemoryType(typ)] = n
	}
	return tot, dbErr("totals memories", rows.Err())
}
