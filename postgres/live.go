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

// turnRowsCol is a result column of a query of episodes aliased e: the
// episode's turn rows in seq order, a text array (NULL when it has none),
// so that an episode and its turns are one statement.
const turnRowsCol = `(SELECT array_agg(t.turn ORDER BY t.seq) FROM episode_turns t WHERE t.episode_id = e.id)`

// withRowsScan is a row of episodeCols followed by turnRowsCol: Scan
// fills the episode's destinations and rows.
type withRowsScan struct {
	row  pgx.Row
	rows *[]string
}

func (w withRowsScan) Scan(dest ...any) error { return w.row.Scan(append(dest, w.rows)...) }

// scanWithTurnRows scans a row of episodeCols and turnRowsCol, the turn
// rows of an open episode appended to its Turns.
func scanWithTurnRows(row pgx.Row) (imprint.Episode, error) {
	var raw []string
	ep, err := scanEpisode(withRowsScan{row: row, rows: &raw})
	if err != nil || ep.Status != imprint.EpisodeOpen {
		return ep, err
	}
	return ep, appendTurnRows(&ep, raw)
}

// appendTurnRows decodes turn rows (their JSON) onto ep.Turns.
func appendTurnRows(ep *imprint.Episode, raw []string) error {
	for _, r := range raw {
		var t imprint.Turn
		if err := json.Unmarshal([]byte(r), &t); err != nil {
			return fmt.Errorf("episode %s turn: %w", ep.ID, err)
		}
		ep.Turns = append(ep.Turns, t)
	}
	return nil
}

// withTurnRows appends the turn rows of an open episode to ep.Turns.
func withTurnRows(ctx context.Context, q querier, ep *imprint.Episode) error {
	if ep.Status != imprint.EpisodeOpen {
		return nil
	}
	var raw []string
	if err := q.QueryRow(ctx, `SELECT array_agg(turn ORDER BY seq) FROM episode_turns WHERE episode_id = $1`, ep.ID).Scan(&raw); err != nil {
		return err
	}
	return appendTurnRows(ep, raw)
}

// appendTurnsSQL reads, for AppendTurns, the session's workspace, its open
// episode (NULLs when none) with the next seq of its turn rows and which
// of the ids $5 its rows hold, and whether the id $6 of a new episode is
// taken: one statement. The session's row exists and is locked
// (lockSessions).
const appendTurnsSQL = `SELECT s.workspace, e.id, e.started_at, e.ended_at, e.created_at, e.turns <> '[]',
	COALESCE((SELECT MAX(t.seq) + 1 FROM episode_turns t WHERE t.episode_id = e.id), 0),
	ARRAY(SELECT t.turn_id FROM episode_turns t WHERE t.episode_id = e.id AND t.turn_id = ANY($5::text[])),
	e.id IS NULL AND EXISTS (SELECT 1 FROM episodes WHERE id = $6)
	FROM sessions s LEFT JOIN LATERAL (SELECT id, started_at, ended_at, created_at, turns FROM episodes
		WHERE tenant = s.tenant AND user_id = s.user_id AND agent = s.agent AND session_id = s.id AND status = 'open'
		ORDER BY created_at DESC LIMIT 1) e ON true
	WHERE s.tenant = $1 AND s.user_id = $2 AND s.agent = $3 AND s.id = $4`

// addTurnsSQL inserts turn rows (ids $6, JSON $7, seq from $5) of episode
// $4 and sets its times, in one statement.
const addTurnsSQL = `WITH ins AS (INSERT INTO episode_turns (episode_id, seq, turn_id, turn)
		SELECT $4, $5::int + t.o::int - 1, t.id, t.turn FROM unnest($6::text[], $7::text[]) WITH ORDINALITY AS t(id, turn, o))
	UPDATE episodes SET started_at = $1, ended_at = $2, updated_at = $3 WHERE id = $4`

// AppendTurns appends turns to the session's open episode in one
// transaction, opening episode newID when the session has none (and
// creating the session). A turn whose non-empty ID the open episode already
// holds is skipped. The session's row is locked, so concurrent appends to
// one session (from any node) run one after the other and open one
// episode. The episode returned holds in Turns only the turns this call
// added, and their total in TurnCount. ErrInvalid for a missing scope,
// session id or newID or an unknown role; ErrConflict when a new episode
// is needed and newID is already taken.
//
// It is four statements (two lock the session) and one more to open an
// episode: a live post is a request's whole store write.
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
	ids := []string{}
	for i, t := range turns {
		if !t.Role.Valid() {
			return imprint.Episode{}, imprint.Invalidf("turns[%d].role %q is not user, assistant, tool or system", i, t.Role)
		}
		if t.ID != "" {
			ids = append(ids, t.ID)
		}
	}
	now := imprint.Now()
	var out imprint.Episode
	err := db.writeTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockSessions(ctx, tx, []imprint.MessageBatch{{Scope: scope, SessionID: sessionID}}, now); err != nil {
			return err
		}
		ep := imprint.Episode{SessionID: sessionID, Scope: scope, Status: imprint.EpisodeOpen, TraceIDs: []string{}}
		var openID *string
		var started, ended, created *time.Time
		var inColumn *bool
		var next int
		var held []string
		var taken bool
		if err := tx.QueryRow(ctx, appendTurnsSQL, scope.Tenant, scope.User, scope.Agent, sessionID, ids, newID).
			Scan(&ep.Workspace, &openID, &started, &ended, &created, &inColumn, &next, &held, &taken); err != nil {
			return err
		}
		if openID == nil {
			if taken {
				return imprint.Conflictf("episode %q already exists", newID)
			}
			// A live episode belongs to its session's workspace.
			ep.ID, ep.CreatedAt, ep.UpdatedAt = newID, now, now
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
			ep.ID = *openID
			ep.StartedAt, ep.EndedAt, ep.CreatedAt = tsOf(started), tsOf(ended), tsOf(created)
			if inColumn != nil && *inColumn {
				// Saved whole while open (SaveEpisode): its turns move
				// to rows once, so that the next appends stay small.
				var err error
				if next, held, err = moveTurnsToRows(ctx, tx, ep.ID, ids); err != nil {
					return err
				}
			}
		}
		holds := make(map[string]bool, len(held))
		for _, id := range held {
			holds[id] = true
		}
		added := []imprint.Turn{}
		var addIDs []*string
		var addRaw []string
		for _, t := range turns {
			if t.ID != "" {
				if holds[t.ID] {
					continue
				}
				holds[t.ID] = true
			}
			raw, err := jsonText(t)
			if err != nil {
				return err
			}
			var id *string
			if t.ID != "" {
				id = &t.ID
			}
			addIDs, addRaw = append(addIDs, id), append(addRaw, raw)
			added = append(added, t)
		}
		if ep.StartedAt.IsZero() {
			ep.StartedAt = now
		}
		if n := len(added); n > 0 && !added[n-1].TS.IsZero() {
			ep.EndedAt = added[n-1].TS
		}
		ep.UpdatedAt = now
		if _, err := tx.Exec(ctx, addTurnsSQL, tsArg(ep.StartedAt), tsArg(ep.EndedAt), now.Time, ep.ID,
			next, addIDs, addRaw); err != nil {
			return err
		}
		ep.Turns, ep.TurnCount = added, next+len(added)
		out = ep
		return nil
	})
	if err != nil {
		return imprint.Episode{}, dbErr("append turns", err)
	}
	return out, nil
}

// moveTurnsToRows moves the turns column of episode id into its rows (the
// episode has none yet: a save of the whole episode deletes them) and
// returns the next seq and which of ids the moved turns hold.
func moveTurnsToRows(ctx context.Context, tx pgx.Tx, id string, ids []string) (int, []string, error) {
	var raw string
	if err := tx.QueryRow(ctx, `SELECT turns FROM episodes WHERE id = $1`, id).Scan(&raw); err != nil {
		return 0, nil, err
	}
	var turns []imprint.Turn
	if err := json.Unmarshal([]byte(raw), &turns); err != nil {
		return 0, nil, fmt.Errorf("episode %s turns: %w", id, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE episodes SET turns = '[]' WHERE id = $1`, id); err != nil {
		return 0, nil, err
	}
	want := map[string]bool{}
	for _, x := range ids {
		want[x] = true
	}
	var held []string
	for i, t := range turns {
		raw, err := jsonText(t)
		if err != nil {
			return 0, nil, err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO episode_turns (episode_id, seq, turn_id, turn) VALUES ($1, $2, $3, $4)`,
			id, i, nullable(t.ID), raw); err != nil {
			return 0, nil, err
		}
		if want[t.ID] {
			held = append(held, t.ID)
		}
	}
	return len(turns), held, nil
}

// OpenEpisode returns the session's open episode, or ErrNotFound.
func (db *DB) OpenEpisode(ctx context.Context, scope imprint.Scope, sessionID string) (imprint.Episode, error) {
	if err := validScope(scope); err != nil {
		return imprint.Episode{}, err
	}
	ep, err := scanWithTurnRows(db.pool.QueryRow(ctx, `SELECT `+episodeCols+`, `+turnRowsCol+` FROM episodes e
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $4 AND status = 'open'
		ORDER BY created_at DESC LIMIT 1`, scope.Tenant, scope.User, scope.Agent, sessionID))
	if errors.Is(err, pgx.ErrNoRows) {
		return ep, imprint.NotFoundf("session %q has no open episode", sessionID)
	}
	return ep, dbErr("open episode", err)
}

// CloseEpisode closes the open episode as closedBy and, when job is not
// nil, enqueues it in the same transaction (EpisodeID, SessionID and Scope
// default to the episode's). The session's row is locked, then the
// episode's: of two nodes closing one episode only one closes it (the other
// gets ErrConflict), and a turn appended meanwhile goes to a new episode.
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
	err := db.writeTx(ctx, func(tx pgx.Tx) error {
		// The session's row first, as AppendTurns locks it: an append
		// waiting for it reads the episode closed and opens a new one.
		// Locking only the episode let an append read it open before the
		// close committed and then write its turns into the closed one.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions s JOIN episodes e ON s.tenant = e.tenant AND s.user_id = e.user_id
			AND s.agent = e.agent AND s.id = e.session_id
			WHERE e.id = $1 AND e.tenant = $2 AND e.user_id = $3 AND e.agent = $4 FOR UPDATE OF s`,
			episodeID, scope.Tenant, scope.User, scope.Agent); err != nil {
			return err
		}
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
		// Read after the lock, not in its statement: an append that
		// held the row committed rows that statement's snapshot misses.
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
		// The rows folded into the column go in the same statement.
		if _, err := tx.Exec(ctx, `WITH d AS (DELETE FROM episode_turns WHERE episode_id = $6)
			UPDATE episodes SET turns = $1, status = $2, closed_by = $3, ended_at = $4, updated_at = $5
			WHERE id = $6`, turnsJSON, string(ep.Status), string(closedBy), ep.EndedAt.Time, now.Time, ep.ID); err != nil {
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
	err := db.writeTx(ctx, func(tx pgx.Tx) error {
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
	rows, err := db.pool.Query(ctx, `SELECT `+episodeCols+`, `+turnRowsCol+` FROM episodes e
		WHERE status = 'open' AND updated_at < $1 ORDER BY updated_at, id LIMIT $2`, before, limit)
	if err != nil {
		return nil, dbErr("idle episodes", err)
	}
	defer rows.Close()
	out := []imprint.Episode{}
	for rows.Next() {
		ep, err := scanWithTurnRows(rows)
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
