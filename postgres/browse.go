package postgres

import (
	"context"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/rowscan"
)

var _ imprint.Browser = (*DB)(nil)

// Totals counts live memories by type, traces, messages and sessions over
// every scope.
func (db *DB) Totals(ctx context.Context) (imprint.Totals, error) {
	tot := imprint.Totals{Memories: map[imprint.MemoryType]int{}}
	if err := db.pool.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM traces), (SELECT COUNT(*) FROM messages),
		(SELECT COUNT(*) FROM sessions)`).Scan(&tot.Traces, &tot.Messages, &tot.Sessions); err != nil {
		return tot, dbErr("totals", err)
	}
	err := countByType(ctx, db.pool, tot.Memories, `SELECT type, COUNT(*) FROM memories WHERE superseded_by IS NULL AND forgotten_at IS NULL GROUP BY type`)
	return tot, dbErr("totals", err)
}

// countByType adds the (type, count) rows of q to into.
func countByType(ctx context.Context, db querier, into map[imprint.MemoryType]int, q string, vals ...any) error {
	rows, err := db.Query(ctx, q, vals...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return err
		}
		into[imprint.MemoryType(t)] = n
	}
	return rows.Err()
}

// SupportsBrowse reports true: CountRecords and ListEpisodes work here.
func (db *DB) SupportsBrowse() bool { return true }

// CountRecords counts the scope's records, each count on an index whose
// prefix is the scope.
func (db *DB) CountRecords(ctx context.Context, scope imprint.Scope) (imprint.RecordCounts, error) {
	out := imprint.RecordCounts{Memories: map[imprint.MemoryType]int{}}
	if err := validScope(scope); err != nil {
		return out, err
	}
	w := `WHERE tenant = $1 AND user_id = $2 AND agent = $3`
	if err := db.pool.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM sessions `+w+`), (SELECT COUNT(*) FROM messages `+w+`),
		(SELECT COUNT(*) FROM episodes `+w+`), (SELECT COUNT(*) FROM traces `+w+`)`, scopeArgs(scope)...).
		Scan(&out.Sessions, &out.Messages, &out.Episodes, &out.Traces); err != nil {
		return out, dbErr("count records", err)
	}
	err := countByType(ctx, db.pool, out.Memories, `SELECT type, COUNT(*) FROM memories `+w+
		` AND superseded_by IS NULL AND forgotten_at IS NULL GROUP BY type`, scopeArgs(scope)...)
	return out, dbErr("count records", err)
}

// ListEpisodes returns the scope's episodes newest first, without turns.
func (db *DB) ListEpisodes(ctx context.Context, scope imprint.Scope, f imprint.EpisodeFilter) ([]imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	var a args
	q := `SELECT id, tenant, user_id, agent, workspace, session_id, status, closed_by, meta, '[]', trace_ids,
		started_at, ended_at, created_at, updated_at,
		json_array_length(turns::json) + (SELECT COUNT(*) FROM episode_turns t WHERE t.episode_id = e.id)
		FROM episodes e WHERE ` + a.scope("e", scope)
	if f.SessionID != "" {
		q += ` AND e.session_id = ` + a.add(f.SessionID)
	}
	q += ` ORDER BY e.created_at DESC, e.id DESC LIMIT ` + a.add(f.Limit)
	rows, err := db.pool.Query(ctx, q, a...)
	if err != nil {
		return nil, dbErr("list episodes", err)
	}
	defer rows.Close()
	out := []imprint.Episode{}
	for rows.Next() {
		var n int
		e, err := scanEpisode(rowscan.With(rows, nil, []any{&n}))
		if err != nil {
			return nil, dbErr("list episodes", err)
		}
		e.TurnCount = n
		out = append(out, e)
	}
	return out, dbErr("list episodes", rows.Err())
}
