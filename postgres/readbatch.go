package postgres

import (
	"context"

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
