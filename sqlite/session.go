package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const sessionCols = `tenant, user_id, agent, workspace, id, cursor_seq, last_scene_name, rounds_since_extraction,
	extraction_due, last_extracted_at, created_at, updated_at, between_people`

func scanSession(row interface{ Scan(...any) error }) (imprint.Session, error) {
	var s imprint.Session
	var due, people int
	var last, created, updated string
	err := row.Scan(&s.Scope.Tenant, &s.Scope.User, &s.Scope.Agent, &s.Workspace, &s.ID, &s.Cursor,
		&s.LastSceneName, &s.RoundsSinceExtraction, &due, &last, &created, &updated, &people)
	s.ExtractionDue, s.BetweenPeople = due != 0, people != 0
	s.LastExtractedAt, s.CreatedAt, s.UpdatedAt = parseTS(last), parseTS(created), parseTS(updated)
	return s, err
}

func ensureSession(ctx context.Context, q querier, scope imprint.Scope, id string, now imprint.Time) error {
	_, err := q.ExecContext(ctx, `INSERT INTO sessions (tenant, user_id, agent, workspace, id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, agent, id) DO NOTHING`,
		scope.Tenant, scope.User, scope.Agent, "", id, ts(now), ts(now))
	return err
}

// getSessionSQL reads one session: prepared once (extraction reads the
// session of every window batch, recording of every conversation between
// people).
var getSessionSQL = rsql(`SELECT ` + sessionCols + ` FROM sessions WHERE ` + scopeWhere("") + ` AND id = ?`)

// GetSession returns the session, or ErrNotFound when it is not in scope.
func (db *DB) GetSession(ctx context.Context, scope imprint.Scope, id string) (imprint.Session, error) {
	if err := validScope(scope); err != nil {
		return imprint.Session{}, err
	}
	st, err := db.readStmt(getSessionSQL)
	if err != nil {
		return imprint.Session{}, dbErr("get session", err)
	}
	s, err := scanSession(st.QueryRowContext(ctx, append(scopeArgs(scope), id)...))
	if errors.Is(err, sql.ErrNoRows) {
		err = imprint.NotFoundf("session %q not found", id)
	}
	return s, dbErr("get session", err)
}

// ListSessions returns the scope's sessions, oldest first.
func (db *DB) ListSessions(ctx context.Context, scope imprint.Scope) ([]imprint.Session, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE `+scopeWhere("")+` ORDER BY created_at, rid`, scopeArgs(scope)...)
	if err != nil {
		return nil, dbErr("list sessions", err)
	}
	defer rows.Close()
	out := []imprint.Session{}
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, dbErr("list sessions", err)
		}
		out = append(out, s)
	}
	return out, dbErr("list sessions", rows.Err())
}

// AdvanceCursor moves the cursor to toSeq (never backwards), records the
// scene and extraction time, and resets the round count and due flag.
// ErrNotFound when the session is not in scope.
func (db *DB) AdvanceCursor(ctx context.Context, scope imprint.Scope, sessionID string, toSeq int64, lastScene string, at time.Time) error {
	if err := validScope(scope); err != nil {
		return err
	}
	now := imprint.Now()
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		m := imprint.CursorMove{SessionID: sessionID, ToSeq: toSeq, LastScene: lastScene, At: at}
		return nil, advanceCursor(ctx, tx, scope, m, now)
	})
	return dbErr("advance cursor", err)
}

// advanceCursor does AdvanceCursor's UPDATE of m inside tx.
func advanceCursor(ctx context.Context, tx *sql.Tx, scope imprint.Scope, m imprint.CursorMove, now imprint.Time) error {
	r, err := tx.ExecContext(ctx, `UPDATE sessions SET cursor_seq = MAX(cursor_seq, ?), last_scene_name = ?,
		last_extracted_at = ?, rounds_since_extraction = 0, extraction_due = 0, updated_at = ?
		WHERE `+scopeWhere("")+` AND id = ?`,
		append([]any{m.ToSeq, m.LastScene, ts(imprint.At(m.At)), ts(now)}, append(scopeArgs(scope), m.SessionID)...)...)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return imprint.NotFoundf("session %q not found", m.SessionID)
	}
	return nil
}

var _ imprint.CursorBatchAdvancer = (*DB)(nil)

// SupportsCursorBatch implements imprint.CursorBatchAdvancer: always true.
func (db *DB) SupportsCursorBatch() bool { return true }

// AdvanceCursors implements imprint.CursorBatchAdvancer: AdvanceCursor's
// UPDATE for each session in one write transaction, rolled back when a
// session is not in scope.
func (db *DB) AdvanceCursors(ctx context.Context, scope imprint.Scope, moves []imprint.CursorMove) error {
	if err := validScope(scope); err != nil {
		return err
	}
	ms, err := imprint.MergeCursorMoves(moves)
	if err != nil || len(ms) == 0 {
		return err
	}
	now := imprint.Now()
	err = db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		for _, m := range ms {
			if err := advanceCursor(ctx, tx, scope, m, now); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	return dbErr("advance cursors", err)
}

// MarkExtractionDue sets or clears the session's due flag. ErrNotFound when
// the session is not in scope.
func (db *DB) MarkExtractionDue(ctx context.Context, scope imprint.Scope, sessionID string, due bool) error {
	if err := validScope(scope); err != nil {
		return err
	}
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		r, err := tx.ExecContext(ctx, `UPDATE sessions SET extraction_due = ?, updated_at = ? WHERE `+scopeWhere("")+` AND id = ?`,
			append([]any{boolInt(due), ts(imprint.Now())}, append(scopeArgs(scope), sessionID)...)...)
		if err != nil {
			return nil, err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return nil, imprint.NotFoundf("session %q not found", sessionID)
		}
		return nil, nil
	})
	return dbErr("mark extraction due", err)
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
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		if err := ensureSession(ctx, tx, scope, sessionID, now); err != nil {
			return nil, err
		}
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET between_people = 1, updated_at = ?
			WHERE `+scopeWhere("")+` AND id = ? AND between_people = 0`,
			append([]any{ts(now)}, append(scopeArgs(scope), sessionID)...)...)
		return nil, err
	})
	return dbErr("mark session between people", err)
}
