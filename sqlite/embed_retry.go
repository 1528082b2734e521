package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/vector"
)

// The embedding retry queries (imprint.EmbedRetryStore).
var _ imprint.EmbedRetryStore = (*DB)(nil)

// UnembeddedMessages returns up to limit messages of the scope without a
// vector, oldest first.
func (db *DB) UnembeddedMessages(ctx context.Context, scope imprint.Scope, limit int) ([]imprint.Message, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+messageCols+` FROM messages WHERE `+scopeWhere("")+
		` AND vec IS NULL ORDER BY seq LIMIT ?`, append(scopeArgs(scope), imprint.RetryLimit(limit))...)
	if err != nil {
		return nil, dbErr("unembedded messages", err)
	}
	defer rows.Close()
	out := []imprint.Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, dbErr("unembedded messages", err)
		}
		out = append(out, m)
	}
	return out, dbErr("unembedded messages", rows.Err())
}

// UnembeddedMemories returns up to limit live memories of the scope without
// a vector, oldest first.
func (db *DB) UnembeddedMemories(ctx context.Context, scope imprint.Scope, limit int) ([]imprint.Memory, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	return db.queryMemories(ctx, "unembedded memories", `SELECT `+memoryCols+` FROM memories m WHERE `+scopeWhere("m")+
		memoryLive+` AND m.vec IS NULL ORDER BY m.rid LIMIT ?`, append(scopeArgs(scope), imprint.RetryLimit(limit))...)
}

// UnembeddedTraces returns up to limit traces of the scope with neither
// vector, oldest first.
func (db *DB) UnembeddedTraces(ctx context.Context, scope imprint.Scope, limit int) ([]imprint.Trace, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+traceCols+` FROM traces t WHERE `+scopeWhere("t")+
		` AND t.vec_summary IS NULL AND t.vec_action IS NULL ORDER BY t.rid LIMIT ?`, append(scopeArgs(scope), imprint.RetryLimit(limit))...)
	if err != nil {
		return nil, dbErr("unembedded traces", err)
	}
	defer rows.Close()
	out := []imprint.Trace{}
	for rows.Next() {
		t, err := scanTrace(rows)
		if err != nil {
			return nil, dbErr("unembedded traces", err)
		}
		out = append(out, t)
	}
	return out, dbErr("unembedded traces", rows.Err())
}

// SetMemoryVector stores vec for the memory when it has none.
func (db *DB) SetMemoryVector(ctx context.Context, scope imprint.Scope, id string, vec []float32, embedder string) error {
	if err := validScope(scope); err != nil {
		return err
	}
	if strings.TrimSpace(embedder) == "" {
		return imprint.Invalidf("embedder is required")
	}
	if len(vec) == 0 {
		return nil
	}
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		var rid int64
		var session, ws string
		var live bool
		err := tx.QueryRowContext(ctx, `UPDATE memories SET vec = ?, embedder = ?, dim = ?
			WHERE id = ? AND `+scopeWhere("")+` AND vec IS NULL RETURNING rid, session_id, workspace, superseded_by IS NULL AND forgotten_at IS NULL`,
			append([]any{vector.Encode(vec), embedder, len(vec), id}, scopeArgs(scope)...)...).Scan(&rid, &session, &ws, &live)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return func() { db.vecUpsert(imprint.KindMemory, embedder, rid, id, scope, session, ws, live, vec) }, nil
	})
	return dbErr("set memory vector", err)
}

// SetTraceVectors stores the summary and action vectors of a trace that
// has neither.
func (db *DB) SetTraceVectors(ctx context.Context, scope imprint.Scope, id string, summary, action []float32, embedder string) error {
	if err := validScope(scope); err != nil {
		return err
	}
	if strings.TrimSpace(embedder) == "" {
		return imprint.Invalidf("embedder is required")
	}
	if len(summary) == 0 && len(action) == 0 {
		return nil
	}
	if len(summary) > 0 && len(action) > 0 && len(summary) != len(action) {
		return imprint.Invalidf("trace %s: summary and action vectors differ in dimension (%d, %d)", id, len(summary), len(action))
	}
	blob := func(v []float32) any {
		if len(v) == 0 {
			return nil
		}
		return vector.Encode(v)
	}
	dim := max(len(summary), len(action))
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		var rid int64
		var session, ws string
		err := tx.QueryRowContext(ctx, `UPDATE traces SET vec_summary = ?, vec_action = ?, embedder = ?, dim = ?
			WHERE id = ? AND `+scopeWhere("")+` AND vec_summary IS NULL AND vec_action IS NULL RETURNING rid, session_id, workspace`,
			append([]any{blob(summary), blob(action), embedder, dim, id}, scopeArgs(scope)...)...).Scan(&rid, &session, &ws)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return func() { db.vecUpsert(imprint.KindTrace, embedder, rid, id, scope, session, ws, true, summary, action) }, nil
	})
	return dbErr("set trace vectors", err)
}
