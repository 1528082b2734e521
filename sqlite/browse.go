package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

var _ imprint.Browser = (*DB)(nil)

// SupportsBrowse reports true: CountRecords and ListEpisodes work here.
func (db *DB) SupportsBrowse() bool { return true }

// CountRecords counts the scope's records, each count on an index whose
// prefix is the scope (live memories on the partial index of migration
// 0015).
func (db *DB) CountRecords(ctx context.Context, scope imprint.Scope) (imprint.RecordCounts, error) {
	out := imprint.RecordCounts{Memories: map[imprint.MemoryType]int{}}
	if err := validScope(scope); err != nil {
		return out, err
	}
	args := scopeArgs(scope)
	for _, c := range []struct {
		dst   *int
		table string
	}{{&out.Sessions, "sessions"}, {&out.Messages, "messages"}, {&out.Episodes, "episodes"}, {&out.Traces, "traces"}} {
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM `+c.table+` WHERE `+scopeWhere(""), args...).Scan(c.dst); err != nil {
			return out, dbErr("count "+c.table, err)
		}
	}
	// memories_live_type (migration 0015) holds exactly the live ones.
	rows, err := db.r.QueryContext(ctx, `SELECT m.type, count(*) FROM memories m WHERE `+scopeWhere("m")+memoryLive+
		` GROUP BY m.type`, args...)
	if err != nil {
		return out, dbErr("count memories", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return out, dbErr("count memories", err)
		}
		out.Memories[imprint.MemoryType(t)] = n
	}
	return out, dbErr("count memories", rows.Err())
}

// ListEpisodes returns the scope's episodes newest first, without turns,
// read in index order (episodes_session, or episodes_created of migration
// 0015), so a page costs its rows, not the scope's.
func (db *DB) ListEpisodes(ctx context.Context, scope imprint.Scope, f imprint.EpisodeFilter) ([]imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	q := `SELECT id, tenant, user_id, agent, workspace, session_id, status, closed_by, meta, trace_ids,
		started_at, ended_at, created_at, updated_at,
		json_array_length(turns) + (SELECT count(*) FROM episode_turns t WHERE t.episode_id = e.id)
		FROM episodes e WHERE ` + scopeWhere("e")
	args := scopeArgs(scope)
	if f.SessionID != "" {
		q += ` AND e.session_id = ?`
		args = append(args, f.SessionID)
	}
	q += ` ORDER BY e.created_at DESC, e.id DESC LIMIT ?`
	rows, err := db.r.QueryContext(ctx, q, append(args, f.Limit)...)
	if err != nil {
		return nil, dbErr("list episodes", err)
	}
	defer rows.Close()
	out := []imprint.Episode{}
	for rows.Next() {
		var e imprint.Episode
		var meta, traceIDs, started, ended, created, updated string
		if err := rows.Scan(&e.ID, &e.Scope.Tenant, &e.Scope.User, &e.Scope.Agent, &e.Workspace, &e.SessionID,
			&e.Status, &e.ClosedBy, &meta, &traceIDs, &started, &ended, &created, &updated, &e.TurnCount); err != nil {
			return nil, dbErr("list episodes", err)
		}
		if err := json.Unmarshal([]byte(meta), &e.Meta); err != nil {
			return nil, fmt.Errorf("list episodes: episode %s meta: %w", e.ID, err)
		}
		if err := json.Unmarshal([]byte(traceIDs), &e.TraceIDs); err != nil {
			return nil, fmt.Errorf("list episodes: episode %s trace ids: %w", e.ID, err)
		}
		if e.TraceIDs == nil {
			e.TraceIDs = []string{}
		}
		e.StartedAt, e.EndedAt, e.CreatedAt, e.UpdatedAt = parseTS(started), parseTS(ended), parseTS(created), parseTS(updated)
		out = append(out, e)
	}
	return out, dbErr("list episodes", rows.Err())
}
