package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

var openEpisodeQuery = `SELECT ` + episodeCols + ` FROM episodes
	WHERE ` + scopeWhere("") + ` AND session_id = ? AND status = 'open' ORDER BY created_at DESC LIMIT 1`

func openEpisode(ctx context.Context, q querier, scope imprint.Scope, sessionID string) (imprint.Episode, error) {
	ep, err := scanEpisode(q.QueryRowContext(ctx, openEpisodeQuery, append(scopeArgs(scope), sessionID)...))
	if errors.Is(err, sql.ErrNoRows) {
		return ep, imprint.NotFoundf("session %q has no open episode", sessionID)
	}
	if err != nil {
		return ep, err
	}
	return ep, withTurnRows(ctx, q, &ep)
}

// Turns appended live are rows of episode_turns (migration 0009): an
// episode's turns are its turns column followed by its rows in seq order.
// An append reads the episode's header, not its turns, and writes only the
// new rows, so it costs the same at turn 2,000 as at turn 10; closing the
// episode folds the rows into the column (foldTurnRows) and a save of the
// whole episode replaces both (upsertEpisode).
var (
	openHeadSQL = wsql(`SELECT id, started_at, ended_at, created_at, octet_length(turns) > 2 FROM episodes
	WHERE ` + scopeWhere("") + ` AND session_id = ? AND status = 'open' ORDER BY created_at DESC LIMIT 1`)
	nextTurnSeqSQL = wsql(`SELECT COALESCE(MAX(seq) + 1, 0) FROM episode_turns WHERE episode_id = ?`)
	hasTurnIDSQL   = wsql(`SELECT EXISTS (SELECT 1 FROM episode_turns WHERE episode_id = ? AND turn_id = ?)`)
	insTurnSQL     = wsql(`INSERT INTO episode_turns (episode_id, seq, turn_id, turn) VALUES (?, ?, ?, ?)`)
	appendedSQL    = wsql(`UPDATE episodes SET started_at = ?, ended_at = ?, updated_at = ? WHERE id = ?`)
	turnRowsSQL    = `SELECT turn FROM episode_turns WHERE episode_id = ? ORDER BY seq`
)

// withTurnRows appends the turn rows of an open episode to ep.Turns.
func withTurnRows(ctx context.Context, q querier, ep *imprint.Episode) error {
	if ep.Status != imprint.EpisodeOpen {
		return nil
	}
	rows, err := q.QueryContext(ctx, turnRowsSQL, ep.ID)
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

// foldTurnRows writes ep's turns (its column and rows, as read into
// ep.Turns) back into its turns column and deletes the rows.
func foldTurnRows(ctx context.Context, tx *sql.Tx, ep imprint.Episode) error {
	turnsJSON, err := jsonText(ep.Turns)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE episodes SET turns = ? WHERE id = ?`, turnsJSON, ep.ID); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM episode_turns WHERE episode_id = ?`, ep.ID)
	return err
}

// AppendTurns appends turns to the session's open episode in one
// transaction, opening episode newID when the session has none (and
// creating the session). A turn whose non-empty ID the open episode already
// holds is skipped, so posting the same turns again changes nothing. The
// episode's EndedAt is its last turn's time and UpdatedAt the time of the
// append (what IdleEpisodes looks at). The episode returned holds in Turns
// only the turns this call added, and their total in TurnCount: neither
// the read nor the write of an append grows with the episode. ErrInvalid
// for a missing scope, session id or newID or an unknown role; ErrConflict
// when a new episode is needed and newID is already taken.
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
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		if err := ensureSession(ctx, tx, scope, sessionID, now); err != nil {
			return nil, err
		}
		ep := imprint.Episode{SessionID: sessionID, Scope: scope, Status: imprint.EpisodeOpen, TraceIDs: []string{}}
		var started, ended, created string
		var inColumn bool
		head, err := db.stmt(ctx, tx, openHeadSQL)
		if err != nil {
			return nil, err
		}
		err = head.QueryRowContext(ctx, append(scopeArgs(scope), sessionID)...).Scan(&ep.ID, &started, &ended, &created, &inColumn)
		opened := errors.Is(err, sql.ErrNoRows)
		if err != nil && !opened {
			return nil, err
		}
		if opened {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM episodes WHERE id = ?`, newID).Scan(&n); err != nil {
				return nil, err
			}
			if n > 0 {
				return nil, imprint.Conflictf("episode %q already exists", newID)
			}
			ep.ID, ep.CreatedAt, ep.UpdatedAt = newID, now, now
			// A live episode belongs to its session's workspace.
			if err := tx.QueryRowContext(ctx, `SELECT workspace FROM sessions WHERE `+scopeWhere("")+` AND id = ?`,
				append(scopeArgs(scope), sessionID)...).Scan(&ep.Workspace); err != nil {
				return nil, err
			}
			if len(turns) > 0 {
				ep.StartedAt = turns[0].TS
			}
			if ep.StartedAt.IsZero() {
				ep.StartedAt = now
			}
			if err := db.upsertEpisode(ctx, tx, ep, true); err != nil {
				return nil, err
			}
		} else {
			ep.StartedAt, ep.EndedAt, ep.CreatedAt = parseTS(started), parseTS(ended), parseTS(created)
			if inColumn {
				// Saved whole while open (SaveEpisode): its turns move
				// to rows once, so that the next appends stay small.
				if err := moveTurnsToRows(ctx, tx, ep.ID); err != nil {
					return nil, err
				}
			}
		}
		added, count, err := db.insertTurnRows(ctx, tx, ep.ID, turns)
		if err != nil {
			return nil, err
		}
		if ep.StartedAt.IsZero() {
			ep.StartedAt = now
		}
		if n := len(added); n > 0 && !added[n-1].TS.IsZero() {
			ep.EndedAt = added[n-1].TS
		}
		ep.UpdatedAt = now
		if _, err := tx.ExecContext(ctx, appendedSQL, ts(ep.StartedAt), ts(ep.EndedAt), ts(now), ep.ID); err != nil {
			return nil, err
		}
		ep.Turns, ep.TurnCount = added, count
		out = ep
		return nil, nil
	})
	if err != nil {
		return imprint.Episode{}, dbErr("append turns", err)
	}
	return out, nil
}

// insertTurnRows appends turns as rows of episode id, skipping a turn
// whose non-empty ID the episode already holds. It returns the turns
// added and how many turns the episode now has in rows.
func (db *DB) insertTurnRows(ctx context.Context, tx *sql.Tx, id string, turns []imprint.Turn) ([]imprint.Turn, int, error) {
	var st [3]*sql.Stmt
	for i, q := range []string{nextTurnSeqSQL, hasTurnIDSQL, insTurnSQL} {
		var err error
		if st[i], err = db.stmt(ctx, tx, q); err != nil {
			return nil, 0, err
		}
	}
	has, ins := st[1], st[2]
	var next int
	if err := st[0].QueryRowContext(ctx, id).Scan(&next); err != nil {
		return nil, 0, err
	}
	added := []imprint.Turn{}
	for _, t := range turns {
		if t.ID != "" {
			var dup bool
			if err := has.QueryRowContext(ctx, id, t.ID).Scan(&dup); err != nil {
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
		if _, err := ins.ExecContext(ctx, id, next, nullable(t.ID), raw); err != nil {
			return nil, 0, err
		}
		next++
		added = append(added, t)
	}
	return added, next, nil
}

// moveTurnsToRows moves the turns column of episode id into its rows. The
// episode has no rows yet: a save of the whole episode deletes them.
func moveTurnsToRows(ctx context.Context, tx *sql.Tx, id string) error {
	var raw string
	if err := tx.QueryRowContext(ctx, `SELECT turns FROM episodes WHERE id = ?`, id).Scan(&raw); err != nil {
		return err
	}
	var turns []imprint.Turn
	if err := json.Unmarshal([]byte(raw), &turns); err != nil {
		return fmt.Errorf("episode %s turns: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE episodes SET turns = '[]' WHERE id = ?`, id); err != nil {
		return err
	}
	for i, t := range turns {
		raw, err := jsonText(t)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, insTurnSQL, id, i, nullable(t.ID), raw); err != nil {
			return err
		}
	}
	return nil
}

// nullable is s, or NULL when empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// OpenEpisode returns the session's open episode, or ErrNotFound.
func (db *DB) OpenEpisode(ctx context.Context, scope imprint.Scope, sessionID string) (imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return imprint.Episode{}, err
	}
	ep, err := openEpisode(ctx, db.r, scope, sessionID)
	return ep, dbErr("open episode", err)
}

// CloseEpisode closes the open episode as closedBy (status and closed_by;
// ended_at stays its last turn's time, or now when it has none) and, when
// job is not nil, enqueues it in the same transaction (EpisodeID, SessionID
// and Scope default to the episode's). Nothing is written when either
// fails. ErrNotFound when the episode is not in scope, ErrConflict when it
// is not open, ErrInvalid for an unknown closedBy or an invalid job.
func (db *DB) CloseEpisode(ctx context.Context, scope imprint.Scope, episodeID string, closedBy imprint.ClosedBy, job *imprint.Job) (imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return imprint.Episode{}, err
	}
	if closedBy != imprint.ClosedFinalized && closedBy != imprint.ClosedAbandoned {
		return imprint.Episode{}, imprint.Invalidf("closed_by %q is not finalized or abandoned", closedBy)
	}
	now := imprint.Now()
	var out imprint.Episode
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		ep, err := scanEpisode(tx.QueryRowContext(ctx, `SELECT `+episodeCols+` FROM episodes WHERE id = ? AND `+scopeWhere(""),
			append([]any{episodeID}, scopeArgs(scope)...)...))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, imprint.NotFoundf("episode %q not found", episodeID)
		}
		if err != nil {
			return nil, err
		}
		if ep.Status != imprint.EpisodeOpen {
			return nil, imprint.Conflictf("episode %q is %s, not open", episodeID, ep.Status)
		}
		if err := withTurnRows(ctx, tx, &ep); err != nil {
			return nil, err
		}
		if err := foldTurnRows(ctx, tx, ep); err != nil {
			return nil, err
		}
		ep.Status, ep.ClosedBy, ep.UpdatedAt = imprint.EpisodeStatus(closedBy), closedBy, now
		if ep.EndedAt.IsZero() {
			ep.EndedAt = now
		}
		if _, err := tx.ExecContext(ctx, `UPDATE episodes SET status = ?, closed_by = ?, ended_at = ?, updated_at = ? WHERE id = ?`,
			string(ep.Status), string(closedBy), ts(ep.EndedAt), ts(now), ep.ID); err != nil {
			return nil, err
		}
		if job != nil {
			if _, _, err := db.enqueueTx(ctx, tx, job.ForEpisode(ep), now); err != nil {
				return nil, err
			}
		}
		out = ep
		return nil, nil
	})
	if err != nil {
		return imprint.Episode{}, dbErr("close episode", err)
	}
	return out, nil
}

// SubmitEpisode saves ep (as SaveEpisode) and enqueues job in the same
// transaction (EpisodeID, SessionID and Scope default to the episode's);
// nothing is written when either fails. ErrConflict when the id belongs to
// another scope, ErrInvalid for an invalid episode or job.
func (db *DB) SubmitEpisode(ctx context.Context, ep imprint.Episode, job imprint.Job) error {
	if err := imprint.CheckEpisode(ep); err != nil {
		return err
	}
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		if err := db.upsertEpisode(ctx, tx, ep, false); err != nil {
			return nil, err
		}
		_, _, err := db.enqueueTx(ctx, tx, job.ForEpisode(ep), imprint.Now())
		return nil, err
	})
	return dbErr("submit episode", err)
}

// IdleEpisodes returns up to limit (100 when <= 0) open episodes of all
// scopes whose last append was before the given time, oldest first.
func (db *DB) IdleEpisodes(ctx context.Context, before time.Time, limit int) ([]imprint.Episode, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+episodeCols+` FROM episodes
		WHERE status = 'open' AND updated_at < ? ORDER BY updated_at, id LIMIT ?`, ts(imprint.At(before)), limit)
	if err != nil {
		return nil, dbErr("idle episodes", err)
	}
	defer rows.Close()
	out := []imprint.Episode{}
	for rows.Next() {
		ep, err := scanEpisode(rows)
		if err != nil {
			return nil, dbErr("idle episodes", err)
		}
		out = append(out, ep)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("idle episodes", err)
	}
	rows.Close()
	for i := range out {
		if err := withTurnRows(ctx, db.r, &out[i]); err != nil {
			return nil, dbErr("idle episodes", err)
		}
	}
	return out, nil
}

// SessionsToExtract returns up to limit (100 when <= 0) sessions of all
// scopes that have pending messages and are either marked due or have had
// no new message recorded since idleBefore: due sessions first, then idle
// ones, each oldest message first. A due session with nothing pending is
// not returned: there is nothing to extract.
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
		{`extraction_due = 1 AND last_seq > cursor_seq`, nil},
		{`last_seq > cursor_seq AND last_message_at < ?`, []any{ts(imprint.At(idleBefore))}},
	} {
		if len(out) >= limit {
			break
		}
		rows, err := db.r.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE `+q.where+
			` ORDER BY last_message_at, rid LIMIT ?`, append(q.args, limit)...)
		if err != nil {
			return nil, dbErr("sessions to extract", err)
		}
		for rows.Next() {
			s, err := scanSession(rows)
			if err != nil {
				rows.Close()
				return nil, dbErr("sessions to extract", err)
			}
			key := s.Scope.String() + "\x00" + s.ID
			if seen[key] || len(out) >= limit {
				continue
			}
			seen[key] = true
			out = append(out, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, dbErr("sessions to extract", err)
		}
	}
	return out, nil
}
