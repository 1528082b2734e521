package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

const episodeCols = `id, tenant, user_id, agent, workspace, session_id, status, closed_by, meta, turns, trace_ids,
	started_at, ended_at, created_at, updated_at`

func scanEpisode(row interface{ Scan(...any) error }) (imprint.Episode, error) {
	var e imprint.Episode
	var meta, turns, traceIDs, started, ended, created, updated string
	if err := row.Scan(&e.ID, &e.Scope.Tenant, &e.Scope.User, &e.Scope.Agent, &e.Workspace, &e.SessionID,
		&e.Status, &e.ClosedBy, &meta, &turns, &traceIDs, &started, &ended, &created, &updated); err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(meta), &e.Meta); err != nil {
		return e, fmt.Errorf("episode %s meta: %w", e.ID, err)
	}
	if err := json.Unmarshal([]byte(turns), &e.Turns); err != nil {
		return e, fmt.Errorf("episode %s turns: %w", e.ID, err)
	}
	if err := json.Unmarshal([]byte(traceIDs), &e.TraceIDs); err != nil {
		return e, fmt.Errorf("episode %s trace ids: %w", e.ID, err)
	}
	if e.Turns == nil {
		e.Turns = []imprint.Turn{}
	}
	if e.TraceIDs == nil {
		e.TraceIDs = []string{}
	}
	e.StartedAt, e.EndedAt, e.CreatedAt, e.UpdatedAt = parseTS(started), parseTS(ended), parseTS(created), parseTS(updated)
	return e, nil
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// The statements of upsertEpisode, prepared on the writer at Open: a
// capture batch writes many episodes.
var (
	episodeOwnerSQL  = wsql(`SELECT tenant, user_id, agent FROM episodes WHERE id = ?`)
	episodeInsertSQL = wsql(`INSERT INTO episodes (` + episodeCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
)

// upsertEpisode writes ep; setTraceIDs says whether an existing row's trace
// ids are replaced. It returns ErrConflict when the id belongs to another
// scope.
func (db *DB) upsertEpisode(ctx context.Context, tx *sql.Tx, ep imprint.Episode, setTraceIDs bool) error {
	enc, err := encodeEpisode(ep)
	if err != nil {
		return err
	}
	return db.writeEpisode(ctx, tx, ep, enc, setTraceIDs)
}

// episodeJSON is an episode's JSON columns, encoded before its transaction
// where it can be (a capture batch encodes them outside the writer's).
type episodeJSON struct{ meta, turns, ids string }

// encodeEpisode encodes ep's meta, turns and trace ids.
func encodeEpisode(ep imprint.Episode) (episodeJSON, error) {
	var enc episodeJSON
	var err error
	if enc.meta, err = jsonText(ep.Meta); err != nil {
		return enc, err
	}
	turns := ep.Turns
	if turns == nil {
		turns = []imprint.Turn{}
	}
	if enc.turns, err = jsonText(turns); err != nil {
		return enc, err
	}
	ids := ep.TraceIDs
	if ids == nil {
		ids = []string{}
	}
	enc.ids, err = jsonText(ids)
	return enc, err
}

// writeEpisode is upsertEpisode with ep's JSON columns encoded (enc).
func (db *DB) writeEpisode(ctx context.Context, tx *sql.Tx, ep imprint.Episode, enc episodeJSON, setTraceIDs bool) error {
	var owner imprint.Scope
	sel, err := db.stmt(ctx, tx, episodeOwnerSQL)
	if err != nil {
		return err
	}
	err = sel.QueryRowContext(ctx, ep.ID).Scan(&owner.Tenant, &owner.User, &owner.Agent)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if exists && (owner.Tenant != ep.Scope.Tenant || owner.User != ep.Scope.User || owner.Agent != ep.Scope.Agent) {
		return imprint.Conflictf("episode %q belongs to another scope", ep.ID)
	}
	meta, turnsJSON, idsJSON := enc.meta, enc.turns, enc.ids
	now := imprint.Now()
	created, updated := ep.CreatedAt, ep.UpdatedAt
	if created.IsZero() {
		created = now
	}
	if updated.IsZero() {
		updated = now
	}
	if !exists {
		ins, err := db.stmt(ctx, tx, episodeInsertSQL)
		if err != nil {
			return err
		}
		_, err = ins.ExecContext(ctx, ep.ID, ep.Scope.Tenant, ep.Scope.User, ep.Scope.Agent, ep.Workspace, ep.SessionID, string(ep.Status),
			string(ep.ClosedBy), meta, turnsJSON, idsJSON, ts(ep.StartedAt), ts(ep.EndedAt), ts(created), ts(updated))
		return err
	}
	q := `UPDATE episodes SET workspace = ?, session_id = ?, status = ?, closed_by = ?, meta = ?, turns = ?,
		started_at = ?, ended_at = ?, updated_at = ?`
	args := []any{ep.Workspace, ep.SessionID, string(ep.Status), string(ep.ClosedBy), meta, turnsJSON,
		ts(ep.StartedAt), ts(ep.EndedAt), ts(updated)}
	if setTraceIDs {
		q += `, trace_ids = ?`
		args = append(args, idsJSON)
	}
	if _, err = tx.ExecContext(ctx, q+` WHERE id = ?`, append(args, ep.ID)...); err != nil {
		return err
	}
	// The whole episode was written: turns appended live are replaced.
	_, err = tx.ExecContext(ctx, `DELETE FROM episode_turns WHERE episode_id = ?`, ep.ID)
	return err
}

// SaveEpisode inserts or updates the episode without touching its traces or
// (for an existing episode) its trace ids. ErrConflict when the id belongs
// to another scope; ErrInvalid for a missing scope, id or session id.
func (db *DB) SaveEpisode(ctx context.Context, ep imprint.Episode) error {
	if err := imprint.CheckEpisode(ep); err != nil {
		return err
	}
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		return nil, db.upsertEpisode(ctx, tx, ep, false)
	})
	return dbErr("save episode", err)
}

// GetEpisode returns the episode, or ErrNotFound when it is not in scope.
func (db *DB) GetEpisode(ctx context.Context, scope imprint.Scope, id string) (imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return imprint.Episode{}, err
	}
	e, err := scanEpisode(db.r.QueryRowContext(ctx, `SELECT `+episodeCols+` FROM episodes WHERE id = ? AND `+scopeWhere(""),
		append([]any{id}, scopeArgs(scope)...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return e, imprint.NotFoundf("episode %q not found", id)
	}
	if err == nil {
		err = withTurnRows(ctx, db.r, &e)
	}
	return e, dbErr("get episode", err)
}
