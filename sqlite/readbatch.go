package sqlite

import (
	"context"
	"encoding/json"

	imprint "github.com/imprint-dev/imprint"
)

var _ imprint.EpisodeBatchReader = (*DB)(nil)

// SupportsEpisodeBatch implements imprint.EpisodeBatchReader: always true.
func (db *DB) SupportsEpisodeBatch() bool { return true }

// episodesByIDSQL reads the episodes of a scope whose ids are in a JSON
// array: one prepared statement for any number of ids. The unary + keeps
// the planner off the scope's index (all of the scope's episodes) for the
// primary key (the ids asked for).
var episodesByIDSQL = rsql(`SELECT ` + episodeCols + ` FROM episodes WHERE id IN (SELECT value FROM json_each(?))
	AND +tenant = ? AND +user_id = ? AND +agent = ?`)

// GetEpisodes returns those of ids that are episodes of scope, as
// GetEpisode returns each, with one query (and one more per open episode,
// for its turn rows). ErrInvalid for an incomplete scope.
func (db *DB) GetEpisodes(ctx context.Context, scope imprint.Scope, ids []string) ([]imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	out := []imprint.Episode{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, dbErr("get episodes", err)
	}
	st, err := db.readStmt(episodesByIDSQL)
	if err != nil {
		return nil, dbErr("get episodes", err)
	}
	rows, err := st.QueryContext(ctx, append([]any{string(list)}, scopeArgs(scope)...)...)
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
	// The turn rows are read once the episodes' rows are closed: the read
	// pool may have one connection.
	for i := range out {
		if err := withTurnRows(ctx, db.r, &out[i]); err != nil {
			return nil, dbErr("get episodes", err)
		}
	}
	return out, nil
}
