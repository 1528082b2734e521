package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	imprint "github.com/imprint-dev/imprint"
)

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

const sessionCols = `tenant, user_id, agent, workspace, id, cursor_seq, last_scene_name, rounds_since_extraction,
	extraction_due, last_extracted_at, created_at, updated_at, between_people`

func scanSession(row pgx.Row) (imprint.Session, error) {
	var s imprint.Session
	var last *time.Time
	var created, updated time.Time
	err := row.Scan(&s.Scope.Tenant, &s.Scope.User, &s.Scope.Agent, &s.Workspace, &s.ID, &s.Cursor,
		&s.LastSceneName, &s.RoundsSinceExtraction, &s.ExtractionDue, &last, &created, &updated, &s.BetweenPeople)
	s.LastExtractedAt, s.CreatedAt, s.UpdatedAt = tsOf(last), imprint.At(created), imprint.At(updated)
	return s, err
}

// ensureSession creates the session when needed; a session without a
// workspace takes workspace when one is given.
func ensureSession(ctx context.Context, tx pgx.Tx, scope imprint.Scope, id, workspace string, now imprint.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO sessions (tenant, user_id, agent, workspace, id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (tenant, user_id, agent, id) DO UPDATE SET workspace = excluded.workspace
		WHERE sessions.workspace = '' AND excluded.workspace <> ''`,
		scope.Tenant, scope.User, scope.Agent, workspace, id, now.Time)
	return err
}

func getSession(ctx context.Context, q querier, scope imprint.Scope, id string) (imprint.Session, error) {
	s, err := scanSession(q.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND id = $4`, scope.Tenant, scope.User, scope.Agent, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, imprint.NotFoundf("session %q not found", id)
	}
	return s, err
}

// GetSession returns the session, or ErrNotFound when it is not in scope.
func (db *DB) GetSession(ctx context.Context, scope imprint.Scope, id string) (imprint.Session, error) {
	if err := validScope(scope); err != nil {
		return imprint.Session{}, err
	}
	s, err := getSession(ctx, db.pool, scope, id)
	return s, dbErr("get session", err)
}

// collectSessions reads every session of rows (err is the query's error).
func collectSessions(op string, rows pgx.Rows, err error) ([]imprint.Session, error) {
	if err != nil {
		return nil, dbErr(op, err)
	}
	defer rows.Close()
	out := []imprint.Session{}
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, dbErr(op, err)
		}
		out = append(out, s)
	}
	return out, dbErr(op, rows.Err())
}

// ListSessions returns the scope's sessions, oldest first.
func (db *DB) ListSessions(ctx context.Context, scope imprint.Scope) ([]imprint.Session, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+sessionCols+` FROM sessions WHERE tenant = $1 AND user_id = $2 AND agent = $3
		ORDER BY created_at, rid`, scopeArgs(scope)...)
	return collectSessions("list sessions", rows, err)
}

// PendingCounts returns, by session id, how many messages of each session
// of the scope are after its cursor (CountPending of each, in one
// statement): a status page asks for every session at once.
func (db *DB) PendingCounts(ctx context.Context, scope imprint.Scope) (map[string]int, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT s.id, (SELECT COUNT(*) FROM messages m
		WHERE m.tenant = s.tenant AND m.user_id = s.user_id AND m.agent = s.agent AND m.session_id = s.id AND m.seq > s.cursor_seq)
		FROM sessions s WHERE s.tenant = $1 AND s.user_id = $2 AND s.agent = $3`, scopeArgs(scope)...)
	if err != nil {
		return nil, dbErr("pending counts", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, dbErr("pending counts", err)
		}
		out[id] = n
	}
	return out, dbErr("pending counts", rows.Err())
}

// updateSession runs an UPDATE of one session (the scope and id are its
// last four placeholders): ErrNotFound when the session is not in scope.
func (db *DB) updateSession(ctx context.Context, op, set string, scope imprint.Scope, id string, vals ...any) error {
	n := len(vals)
	q := `UPDATE sessions SET ` + set + ` WHERE tenant = $` + itoa(n+1) + ` AND user_id = $` + itoa(n+2) +
		` AND agent = $` + itoa(n+3) + ` AND id = $` + itoa(n+4)
	tag, err := db.pool.Exec(ctx, q, append(vals, scope.Tenant, scope.User, scope.Agent, id)...)
	if err != nil {
		return dbErr(op, err)
	}
	if tag.RowsAffected() == 0 {
		return dbErr(op, imprint.NotFoundf("session %q not found", id))
	}
	return nil
}

// AdvanceCursor moves the cursor to toSeq (never backwards), records the
// scene and extraction time, and resets the round count and due flag.
// ErrNotFound when the session is not in scope.
func (db *DB) AdvanceCursor(ctx context.Context, scope imprint.Scope, sessionID string, toSeq int64, lastScene string, at time.Time) error {
	if err := validScope(scope); err != nil {
		return err
	}
	return db.updateSession(ctx, "advance cursor", `cursor_seq = GREATEST(cursor_seq, $1), last_scene_name = $2,
		last_extracted_at = $3, rounds_since_extraction = 0, extraction_due = false, updated_at = $4`,
		scope, sessionID, toSeq, lastScene, tsArg(imprint.At(at)), imprint.Now().Time)
}

var _ imprint.CursorBatchAdvancer = (*DB)(nil)

// SupportsCursorBatch implements imprint.CursorBatchAdvancer: always true.
func (db *DB) SupportsCursorBatch() bool { return true }

// AdvanceCursors implements imprint.CursorBatchAdvancer in one round trip
// (a batch, one implicit transaction): it locks the sessions' rows in the
// byte order of their ids, as recording does (lockSessions), so that it
// never deadlocks with a recording of the same sessions, then updates them
// all, or none when one is not in scope (then read again to name it).
func (db *DB) AdvanceCursors(ctx context.Context, scope imprint.Scope, moves []imprint.CursorMove) error {
	if err := validScope(scope); err != nil {
		return err
	}
	ms, err := imprint.MergeCursorMoves(moves)
	if err != nil || len(ms) == 0 {
		return err
	}
	given := make([]string, len(ms)) // for the error, in the moves' order
	for i, m := range ms {
		given[i] = m.SessionID
	}
	slices.SortFunc(ms, func(a, b imprint.CursorMove) int { return strings.Compare(a.SessionID, b.SessionID) })
	ids, seqs, scenes := make([]string, len(ms)), make([]int64, len(ms)), make([]string, len(ms))
	ats := make([]pgtype.Timestamptz, len(ms))
	for i, m := range ms {
		ids[i], seqs[i], scenes[i] = m.SessionID, m.ToSeq, m.LastScene
		if t := imprint.At(m.At); !t.IsZero() {
			ats[i] = pgtype.Timestamptz{Time: t.Time, Valid: true}
		}
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT 1 FROM sessions s
		JOIN unnest($4::text[]) WITH ORDINALITY AS k(i, o) ON s.tenant = $1 AND s.user_id = $2 AND s.agent = $3 AND s.id = k.i
		ORDER BY k.o FOR UPDATE OF s`, scope.Tenant, scope.User, scope.Agent, ids)
	// The all-present guard is an uncorrelated subquery, which the server
	// runs once (an InitPlan) whatever the plan: joined to the sessions, a
	// plan made while the table was small and had no statistics ran it
	// again for each session of the scope, n² rows per call
	// (TestAdvanceCursorsReadScopeOnce).
	b.Queue(`UPDATE sessions s SET cursor_seq = GREATEST(s.cursor_seq, m.to_seq), last_scene_name = m.scene,
			last_extracted_at = m.at, rounds_since_extraction = 0, extraction_due = false, updated_at = $4
		FROM unnest($5::text[], $6::bigint[], $7::text[], $8::timestamptz[]) AS m(id, to_seq, scene, at)
		WHERE s.tenant = $1 AND s.user_id = $2 AND s.agent = $3 AND s.id = m.id
			AND (SELECT count(*) FROM sessions c WHERE c.tenant = $1 AND c.user_id = $2 AND c.agent = $3
				AND c.id = ANY($5)) = cardinality($5::text[])
		RETURNING s.id`, scope.Tenant, scope.User, scope.Agent, imprint.Now().Time, ids, seqs, scenes, ats)
	br := db.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return dbErr("advance cursors", err)
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return dbErr("advance cursors", err)
	}
	moved, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil || len(moved) == len(ids) {
		return dbErr("advance cursors", err)
	}
	// Which session is not in scope: read again (a session created since
	// the UPDATE was not there for it).
	rows, err = db.pool.Query(ctx, `SELECT id FROM sessions WHERE tenant = $1 AND user_id = $2 AND agent = $3
		AND id = ANY($4)`, scope.Tenant, scope.User, scope.Agent, ids)
	if err != nil {
		return dbErr("advance cursors", err)
	}
	there, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return dbErr("advance cursors", err)
	}
	missing := slices.IndexFunc(given, func(id string) bool { return !slices.Contains(there, id) })
	if missing < 0 {
		missing = slices.IndexFunc(given, func(id string) bool { return !slices.Contains(moved, id) })
	}
	return dbErr("advance cursors", imprint.NotFoundf("session %q not found", given[missing]))
}

// MarkExtractionDue sets or clears the session's due flag. ErrNotFound when
// the session is not in scope.
func (db *DB) MarkExtractionDue(ctx context.Context, scope imprint.Scope, sessionID string, due bool) error {
	if err := validScope(scope); err != nil {
		return err
	}
	return db.updateSession(ctx, "mark extraction due", `extraction_due = $1, updated_at = $2`,
		scope, sessionID, due, imprint.Now().Time)
}

// MarkBetweenPeople sets the session's between_people flag, creating the
// session when needed, in one transaction. ErrInvalid for a missing scope
// or session id.
func (db *DB) MarkBetweenPeople(ctx context.Context, scope imprint.Scope, sessionID string) error {
	if err := validScope(scope); err != nil {
		return err
	}
	if strings.TrimSpace(sessionID) == "" {
		return imprint.Invalidf("session_id is required")
	}
	now := imprint.Now()
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if err := ensureSession(ctx, tx, scope, sessionID, "", now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE sessions SET between_people = true, updated_at = $1
			WHERE tenant = $2 AND user_id = $3 AND agent = $4 AND id = $5 AND NOT between_people`,
			now.Time, scope.Tenant, scope.User, scope.Agent, sessionID)
		return err
	})
	return dbErr("mark session between people", err)
}
