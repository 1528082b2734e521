package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

// Turns appended live are rows of episode_turns: an episode's turns are
// its turns column followed by its rows in seq order. Closing the episode
// folds the rows into the column; a save of the whole episode replaces
// both (upsertEpisode).

// withTurnRows appends the turn rows of an open episode to ep.Turns.
func withTurnRows(ctx context.Context, q querier, ep *imprint.Episode) error {
	if ep.Status != imprint.EpisodeOpen {
		return nil
	}
	rows, err := q.Query(ctx, `SELECT turn FROM episode_turns WHERE episode_id = $1 ORDER BY seq`, ep.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return err
		}
		var t imprint.Turn
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			return fmt.Errorf("episode %s turn: %w", ep.ID, err)
		}
		ep.Turns = append(ep.Turns, t)
	}
	return rows.Err()
}

// AppendTurns appends turns to the session's open episode in one
// transaction, opening episode newID when the session has none (and
// creating the session). A turn whose non-empty ID the open episode already
// holds is skipped. The session's row is locked, so concurrent appends to
// one session (from any node) run one after the other and open one
// episode. The episode returned holds in Turns only the turns this call
// added, and their total in TurnCount. ErrInvalid for a missing scope,
// session id or newID or an unknown role; ErrConflict when a new episode
// is needed and newID is already taken.
func (db *DB) AppendTurns(ctx context.Context, scope imprint.Scope, sessionID string, turns []imprint.Turn, newID string) (imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return imprint.Episode{}, err
	}
	if strings.TrimSpace(sessionID) == "" {
		return imprint.Episode{}, imprint.Invalidf("session_id is required")
	}
	if strings.TrimSpace(newID) == "" {
		return imprint.Episode{}, imprint.Invalidf("episode id is required")
	}
	for i, t := range turns {
		if !t.Role.Valid() {
			return imprint.Episode{}, imprint.Invalidf("turns[%d].role %q is not user, assistant, tool or system", i, t.Role)
		}
	}
	now := imprint.Now()
	var out imprint.Episode
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := lockSessions(ctx, tx, []imprint.MessageBatch{{Scope: scope, SessionID: sessionID}}, now); err != nil {
			return err
		}
		ep := imprint.Episode{SessionID: sessionID, Scope: scope, Status: imprint.EpisodeOpen, TraceIDs: []string{}}
		var started, ended *time.Time
		var created time.Time
		var inColumn bool
		err := tx.QueryRow(ctx, `SELECT id, started_at, ended_at, created_at, turns <> '[]' FROM episodes
			WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $4 AND status = 'open'
			ORDER BY created_at DESC LIMIT 1`, scope.Tenant, scope.User, scope.Agent, sessionID).
			Scan(&ep.ID, &started, &ended, &created, &inColumn)
		opened := errors.Is(err, pgx.ErrNoRows)
		if err != nil && !opened {
			return err
		}
		if opened {
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM episodes WHERE id = $1`, newID).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return imprint.Conflictf("episode %q already exists", newID)
			}
			ep.ID, ep.CreatedAt, ep.UpdatedAt = newID, now, now
			// A live episode belongs to its session's workspace.
			if err := tx.QueryRow(ctx, `SELECT workspace FROM sessions WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND id = $4`,
				scope.Tenant, scope.User, scope.Agent, sessionID).Scan(&ep.Workspace); err != nil {
				return err
			}
			if len(turns) > 0 {
				ep.StartedAt = turns[0].TS
			}
			if ep.StartedAt.IsZero() {
				ep.StartedAt = now
			}
			if _, err := upsertEpisode(ctx, tx, ep, true); err != nil {
				return err
			}
		} else {
			ep.StartedAt, ep.EndedAt, ep.CreatedAt = tsOf(started), tsOf(ended), imprint.At(created)
			if inColumn {
				// Saved whole while open (SaveEpisode): its turns move
				// to rows once, so that the next appends stay small.
				if err := moveTurnsToRows(ctx, tx, ep.ID); err != nil {
					return err
				}
			}
		}
		added, count, err := insertTurnRows(ctx, tx, ep.ID, turns)
		if err != nil {
			return err
		}
		if ep.StartedAt.IsZero() {
			ep.StartedAt = now
		}
		if n := len(added); n > 0 && !added[n-1].TS.IsZero() {
			ep.EndedAt = added[n-1].TS
		}
		ep.UpdatedAt = now
		if _, err := tx.Exec(ctx, `UPDATE episodes SET started_at = $1, ended_at = $2, updated_at = $3 WHERE id = $4`,
			tsArg(ep.StartedAt), tsArg(ep.EndedAt), now.Time, ep.ID); err != nil {
			return err
		}
		ep.Turns, ep.TurnCount = added, count
		out = ep
		return nil
	})
	if err != nil {
		return imprint.Episode{}, dbErr("append turns", err)
	}
	return out, nil
}

// insertTurnRows appends turns as rows of episode id, skipping a turn
// whose non-empty ID the episode already holds. It returns the turns
// added and how many turns the episode now has in rows.
func insertTurnRows(ctx context.Context, tx pgx.Tx, id string, turns []imprint.Turn) ([]imprint.Turn, int, error) {
	var next int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq) + 1, 0) FROM episode_turns WHERE episode_id = $1`, id).Scan(&next); err != nil {
		return nil, 0, err
	}
	added := []imprint.Turn{}
	for _, t := range turns {
		if t.ID != "" {
			var dup bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM episode_turns WHERE episode_id = $1 AND turn_id = $2)`,
				id, t.ID).Scan(&dup); err != nil {
				return nil, 0, err
			}
			if dup {
				continue
			}
		}
		raw, err := jsonText(t)
		if err != nil {
			return nil, 0, err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO episode_turns (episode_id, seq, turn_id, turn) VALUES ($1, $2, $3, $4)`,
			id, next, nullable(t.ID), raw); err != nil {
			return nil, 0, err
		}
		next++
		added = append(added, t)
	}
	return added, next, nil
}

// moveTurnsToRows moves the turns column of episode id into its rows. The
// episode has no rows yet: a save of the whole episode deletes them.
func moveTurnsToRows(ctx context.Context, tx pgx.Tx, id string) error {
	var raw string
	if err := tx.QueryRow(ctx, `SELECT turns FROM episodes WHERE id = $1`, id).Scan(&raw); err != nil {
		return err
	}
	var turns []imprint.Turn
	if err := json.Unmarshal([]byte(raw), &turns); err != nil {
		return fmt.Errorf("episode %s turns: %w", id, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE episodes SET turns = '[]' WHERE id = $1`, id); err != nil {
		return err
	}
	for i, t := range turns {
		raw, err := jsonText(t)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO episode_turns (episode_id, seq, turn_id, turn) VALUES ($1, $2, $3, $4)`,
			id, i, nullable(t.ID), raw); err != nil {
			return err
		}
	}
	return nil
}

// OpenEpisode returns the session's open episode, or ErrNotFound.
func (db *DB) OpenEpisode(ctx context.Context, scope imprint.Scope, sessionID string) (imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return imprint.Episode{}, err
	}
	ep, err := scanEpisode(db.pool.QueryRow(ctx, `SELECT `+episodeCols+` FROM episodes
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $4 AND status = 'open'
		ORDER BY created_at DESC LIMIT 1`, scope.Tenant, scope.User, scope.Agent, sessionID))
	if errors.Is(err, pgx.ErrNoRows) {
		return ep, imprint.NotFoundf("session %q has no open episode", sessionID)
	}
	if err == nil {
		err = withTurnRows(ctx, db.pool, &ep)
	}
	return ep, dbErr("open episode", err)
}

// CloseEpisode closes the open episode as closedBy and, when job is not
// nil, enqueues it in the same transaction (EpisodeID, SessionID and Scope
// default to the episode's). The episode's row is locked, so of two nodes
// closing one episode only one closes it (the other gets ErrConflict).
// ErrNotFound when the episode is not in scope, ErrConflict when it is not
// open, ErrInvalid for an unknown closedBy or an invalid job.
func (db *DB) CloseEpisode(ctx context.Context, scope imprint.Scope, episodeID string, closedBy imprint.ClosedBy, job *imprint.Job) (imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return imprint.Episode{}, err
	}
	if closedBy != imprint.ClosedFinalized && closedBy != imprint.ClosedAbandoned {
		return imprint.Episode{}, imprint.Invalidf("closed_by %q is not finalized or abandoned", closedBy)
	}
	now := imprint.Now()
	var out imprint.Episode
	err := db.tx(ctx, func(tx pgx.Tx) error {
		ep, err := scanEpisode(tx.QueryRow(ctx, `SELECT `+episodeCols+` FROM episodes
			WHERE id = $1 AND tenant = $2 AND user_id = $3 AND agent = $4 FOR UPDATE`,
			episodeID, scope.Tenant, scope.User, scope.Agent))
		if errors.Is(err, pgx.ErrNoRows) {
			return imprint.NotFoundf("episode %q not found", episodeID)
		}
		if err != nil {
			return err
		}
		if ep.Status != imprint.EpisodeOpen {
			return imprint.Conflictf("episode %q is %s, not open", episodeID, ep.Status)
		}
		if err := withTurnRows(ctx, tx, &ep); err != nil {
			return err
		}
		turnsJSON, err := jsonText(ep.Turns)
		if err != nil {
			return err
		}
		ep.Status, ep.ClosedBy, ep.UpdatedAt = imprint.EpisodeStatus(closedBy), closedBy, now
		if ep.EndedAt.IsZero() {
			ep.EndedAt = now
		}
		if _, err := tx.Exec(ctx, `UPDATE episodes SET turns = $1, status = $2, closed_by = $3, ended_at = $4, updated_at = $5
			WHERE id = $6`, turnsJSON, string(ep.Status), string(closedBy), ep.EndedAt.Time, now.Time, ep.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM episode_turns WHERE episode_id = $1`, ep.ID); err != nil {
			return err
		}
		if job != nil {
			if _, _, err := db.enqueueTx(ctx, tx, job.ForEpisode(ep), now); err != nil {
				return err
			}
		}
		out = ep
		return nil
	})
	if err != nil {
		return imprint.Episode{}, dbErr("close episode", err)
	}
	return out, nil
}

// SubmitEpisode saves ep (as SaveEpisode) and enqueues job in the same
// transaction; nothing is written when either fails. ErrConflict when the
// id belongs to another scope, ErrInvalid for an invalid episode or job.
func (db *DB) SubmitEpisode(ctx context.Context, ep imprint.Episode, job imprint.Job) error {
	if err := imprint.CheckEpisode(ep); err != nil {
		return err
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := upsertEpisode(ctx, tx, ep, false); err != nil {
			return err
		}
		_, _, err := db.enqueueTx(ctx, tx, job.ForEpisode(ep), imprint.Now())
		return err
	})
	return dbErr("submit episode", err)
}

// collectEpisodes reads every episode of rows (err is the query's error).
func collectEpisodes(op string, rows pgx.Rows, err error) ([]imprint.Episode, error) {
	if err != nil {
		return nil, dbErr(op, err)
	}
	defer rows.Close()
	out := []imprint.Episode{}
	for rows.Next() {
		ep, err := scanEpisode(rows)
		if err != nil {
			return nil, dbErr(op, err)
		}
		out = append(out, ep)
	}
	return out, dbErr(op, rows.Err())
}

// IdleEpisodes returns up to limit (100 when <= 0) open episodes of all
// scopes whose last append was before the given time, oldest first.
func (db *DB) IdleEpisodes(ctx context.Context, before time.Time, limit int) ([]imprint.Episode, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.pool.Query(ctx, `SELECT `+episodeCols+` FROM episodes
		WHERE status = 'open' AND updated_at < $1 ORDER BY updated_at, id LIMIT $2`, before, limit)
	out, err := collectEpisodes("idle episodes", rows, err)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if err := withTurnRows(ctx, db.pool, &out[i]); err != nil {
			return nil, dbErr("idle episodes", err)
		}
	}
	return out, nil
}

// SessionsToExtract returns up to limit (100 when <= 0) sessions of all
// scopes that have pending messages and are either marked due or have had
// no new message recorded since idleBefore: due sessions first, then idle
// ones, each oldest message first.
func (db *DB) SessionsToExtract(ctx context.Context, idleBefore time.Time, limit int) ([]imprint.Session, error) {
	if limit <= 0 {
		limit = 100
	}
	out := []imprint.Session{}
	seen := map[string]bool{}
	for _, q := range []struct {
		where string
		args  []any
	}{
		{`extraction_due AND last_seq > cursor_seq`, nil},
		{`last_seq > cursor_seq AND last_message_at < $2`, []any{idleBefore}},
	} {
		if len(out) >= limit {
			break
		}
		rows, err := db.pool.Query(ctx, `SELECT `+sessionCols+` FROM sessions WHERE `+q.where+
			` ORDER BY last_message_at, rid LIMIT $1`, append([]any{limit}, q.args...)...)
		got, err := collectSessions("sessions to extract", rows, err)
		if err != nil {
			return nil, err
		}
		for _, s := range got {
			key := sessionKey(s.Scope, s.ID)
			if seen[key] || len(out) >= limit {
				continue
			}
			seen[key] = true
			out = append(out, s)
		}
	}
	return out, nil
}
