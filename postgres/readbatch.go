package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

var _ imprint.EpisodeBatchReader = (*DB)(nil)

// SupportsEpisodeBatch implements imprint.EpisodeBatchReader: always true.
func (db *DB) SupportsEpisodeBatch() bool { return true }

// GetEpisodes returns those of ids that are episodes of scope, as
// GetEpisode returns each, in one round trip (and one more per open
// episode, for its turn rows): an import asks for the episodes of a
// capture batch at once instead of one round trip each. ErrInvalid for an
// incomplete scope.
func (db *DB) GetEpisodes(ctx context.Context, scope imprint.Scope, ids []string) ([]imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	out := []imprint.Episode{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+episodeCols+` FROM episodes
		WHERE id = ANY($1) AND tenant = $2 AND user_id = $3 AND agent = $4`, ids, scope.Tenant, scope.User, scope.Agent)
	if err != nil {
		return nil, dbErr("get episodes", err)
	}
	for rows.Next() {
		e, err := scanEpisode(rows)
		if err != nil {
			rows.Close()
			return nil, dbErr("get episodes", err)
		}
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, dbErr("get episodes", err)
	}
	for i := range out {
		if err := withTurnRows(ctx, db.pool, &out[i]); err != nil {
			return nil, dbErr("get episodes", err)
		}
	}
	return out, nil
}

var _ imprint.PendingBatchReader = (*DB)(nil)

// SupportsPendingBatch implements imprint.PendingBatchReader: always true.
func (db *DB) SupportsPendingBatch() bool { return true }

// PendingBatch returns the sessions ids of scope and up to limit of the
// pending messages of each, as GetSession and PendingMessages return them,
// with two queries in one round trip: extraction's planner reads the
// sessions of a batch at once instead of with two round trips each.
// ErrInvalid for an incomplete scope.
func (db *DB) PendingBatch(ctx context.Context, scope imprint.Scope, ids []string, limit int) ([]imprint.SessionPending, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	out := make([]imprint.SessionPending, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	uniq := slices.Clone(ids)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	var lim any
	if limit > 0 {
		lim = limit
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT `+sessionCols+` FROM sessions
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND id = ANY($4)`, scope.Tenant, scope.User, scope.Agent, uniq)
	b.Queue(`SELECT x.* FROM unnest($4::text[]) AS k(id)
		CROSS JOIN LATERAL (SELECT `+messageColsNoVec+` FROM messages m
			WHERE m.tenant = $1 AND m.user_id = $2 AND m.agent = $3 AND m.session_id = k.id
			AND m.seq > COALESCE((SELECT cursor_seq FROM sessions s
				WHERE s.tenant = $1 AND s.user_id = $2 AND s.agent = $3 AND s.id = k.id), 0)
			ORDER BY m.seq LIMIT $5) x
		ORDER BY x.session_id, x.seq`, scope.Tenant, scope.User, scope.Agent, uniq, lim)
	br := db.pool.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	sessions, err := collectSessions("pending batch", rows, err)
	if err != nil {
		return nil, err
	}
	rows, err = br.Query()
	msgs, err := collectMessages("pending batch", rows, err)
	if err != nil {
		return nil, err
	}
	if err := br.Close(); err != nil {
		return nil, dbErr("pending batch", err)
	}
	byID := make(map[string]imprint.SessionPending, len(uniq))
	for _, s := range sessions {
		byID[s.ID] = imprint.SessionPending{Session: s, Found: true, Pending: []imprint.Message{}}
	}
	for i := 0; i < len(msgs); {
		j := i + 1
		for j < len(msgs) && msgs[j].SessionID == msgs[i].SessionID {
			j++
		}
		sp := byID[msgs[i].SessionID]
		sp.Pending = msgs[i:j:j]
		byID[msgs[i].SessionID] = sp
		i = j
	}
	seen := make(map[string]bool, len(uniq))
	for i, id := range ids {
		sp := byID[id]
		if sp.Pending == nil {
			sp.Pending = []imprint.Message{}
		}
		if seen[id] {
			// A repeated id gets its own copy of the messages.
			sp.Pending = slices.Clone(sp.Pending)
		}
		seen[id] = true
		out[i] = sp
	}
	return out, nil
}
