package sqlite

import (
	"context"
	"database/sql"
	"errors"
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
	return ep, err
}

// AppendTurns appends turns to the session's open episode in one
// transaction, opening episode newID when the session has none (and
// creating the session). A turn whose non-empty ID the open episode already
// holds is skipped, so posting the same turns again changes nothing. The
// episode's EndedAt is its last turn's time and UpdatedAt the time of the
// append (what IdleEpisodes looks at). ErrInvalid for a missing scope,
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
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		if err := ensureSession(ctx, tx, scope, sessionID, now); err != nil {
			return nil, err
		}
		ep, err := openEpisode(ctx, tx, scope, sessionID)
		opened := errors.Is(err, imprint.ErrNotFound)
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
			ep = imprint.Episode{ID: newID, SessionID: sessionID, Scope: scope, Status: imprint.EpisodeOpen,
				Turns: []imprint.Turn{}, TraceIDs: []string{}, CreatedAt: now}
		}
		have := map[string]bool{}
		for _, t := range ep.Turns {
			if t.ID != "" {
				have[t.ID] = true
			}
		}
		for _, t := range turns {
			if t.ID != "" {
				if have[t.ID] {
					continue
				}
				have[t.ID] = true
			}
			ep.Turns = append(ep.Turns, t)
		}
		if ep.StartedAt.IsZero() && len(ep.Turns) > 0 {
			ep.StartedAt = ep.Turns[0].TS
		}
		if ep.StartedAt.IsZero() {
			ep.StartedAt = now
		}
		if n := len(ep.Turns); n > 0 && !ep.Turns[n-1].TS.IsZero() {
			ep.EndedAt = ep.Turns[n-1].TS
		}
		ep.UpdatedAt = now
		out = ep
		if opened {
			return nil, upsertEpisode(ctx, tx, ep, true)
		}
		turnsJSON, err := jsonText(ep.Turns)
		if err != nil {
			return nil, err
		}
		_, err = tx.ExecContext(ctx, `UPDATE episodes SET turns = ?, started_at = ?, ended_at = ?, updated_at = ? WHERE id = ?`,
			turnsJSON, ts(ep.StartedAt), ts(ep.EndedAt), ts(now), ep.ID)
		return nil, err
	})
	if err != nil {
		return imprint.Episode{}, dbErr("append turns", err)
	}
	return out, nil
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
		ep.Status, ep.ClosedBy, ep.UpdatedAt = imprint.EpisodeStatus(closedBy), closedBy, now
		if ep.EndedAt.IsZero() {
			ep.EndedAt = now
		}
		if _, err := tx.ExecContext(ctx, `UPDATE episodes SET status = ?, closed_by = ?, ended_at = ?, updated_at = ? WHERE id = ?`,
			string(ep.Status), string(closedBy), ts(ep.EndedAt), ts(now), ep.ID); err != nil {
			return nil, err
		}
		if job != nil {
			if _, _, err := db.enqueueTx(ctx, tx, jobFor(*job, ep), now); err != nil {
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

// jobFor fills the job's empty episode, session and scope from ep.
func jobFor(j imprint.Job, ep imprint.Episode) imprint.Job {
	if j.EpisodeID == "" {
		j.EpisodeID = ep.ID
	}
	if j.SessionID == "" {
		j.SessionID = ep.SessionID
	}
	if j.Scope == (imprint.Scope{}) {
		j.Scope = ep.Scope
	}
	return j
}

// SubmitEpisode saves ep (as SaveEpisode) and enqueues job in the same
// transaction (EpisodeID, SessionID and Scope default to the episode's);
// nothing is written when either fails. ErrConflict when the id belongs to
// another scope, ErrInvalid for an invalid episode or job.
func (db *DB) SubmitEpisode(ctx context.Context, ep imprint.Episode, job imprint.Job) error {
	if err := validEpisode(ep); err != nil {
		return err
	}
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		if err := upsertEpisode(ctx, tx, ep, false); err != nil {
			return nil, err
		}
		_, _, err := db.enqueueTx(ctx, tx, jobFor(job, ep), imprint.Now())
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
	return out, dbErr("idle episodes", rows.Err())
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
