package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/vector"
)

const messageCols = `seq, tenant, user_id, agent, workspace, session_id, id, role, content, timestamp, recorded_at, speaker, vec, embedder`

// messageColsNoVec reads messages without their vectors (a 1.5 KB BLOB to
// read and decode per 384-d message), for listings whose callers never use
// them.
const messageColsNoVec = `seq, tenant, user_id, agent, workspace, session_id, id, role, content, timestamp, recorded_at, speaker, NULL, ''`

func scanMessage(row interface{ Scan(...any) error }) (imprint.Message, error) {
	var m imprint.Message
	var tsS, rec string
	var vec []byte
	if err := row.Scan(&m.Seq, &m.Scope.Tenant, &m.Scope.User, &m.Scope.Agent, &m.Workspace, &m.SessionID,
		&m.ID, &m.Role, &m.Content, &tsS, &rec, &m.Speaker, &vec, &m.Embedder); err != nil {
		return m, err
	}
	m.Timestamp, m.RecordedAt = parseTS(tsS), parseTS(rec)
	if len(vec) > 0 {
		v, err := vector.Decode(vec)
		if err != nil {
			return m, fmt.Errorf("message %s: %w", m.ID, err)
		}
		m.Vec = v
	}
	return m, nil
}

// The statements of AppendMessages and AppendMessageBatches.
var (
	messageInsertSQL = wsql(`INSERT INTO messages
		(tenant, user_id, agent, workspace, session_id, id, role, content, timestamp, recorded_at, speaker, vec, embedder, dim)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant, user_id, agent, session_id, id) DO NOTHING`)
	sessionAppendedSQL = wsql(`UPDATE sessions SET rounds_since_extraction = rounds_since_extraction + ?,
		last_seq = MAX(last_seq, ?), last_message_at = ?, updated_at = ?
		WHERE ` + scopeWhere("") + ` AND id = ?`)
	sessionMarkDueSQL = wsql(`UPDATE sessions SET extraction_due = 1, updated_at = ?
		WHERE ` + scopeWhere("") + ` AND id = ?`)
	// sessionEnsureSQL and sessionGetSQL are ensureSession and getSession
	// as prepared statements, for the append path.
	// A session takes the workspace of the first messages that name one.
	sessionEnsureSQL = wsql(`INSERT INTO sessions (tenant, user_id, agent, workspace, id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, agent, id) DO UPDATE SET workspace = excluded.workspace
		WHERE sessions.workspace = '' AND excluded.workspace <> ''`)
	sessionGetSQL = wsql(`SELECT ` + sessionCols + ` FROM sessions WHERE ` + scopeWhere("") + ` AND id = ?`)
)

// AppendMessages records msgs in one transaction, skipping ids already
// recorded for the session. It creates the session when needed and adds the
// recorded user messages to its round count. ErrInvalid for an empty scope,
// session id or message id.
func (db *DB) AppendMessages(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) (imprint.AppendResult, error) {
	if err := imprint.CheckAppend(scope, sessionID, msgs); err != nil {
		return imprint.AppendResult{}, err
	}
	res, err := db.appendBatches(ctx, []imprint.MessageBatch{{Scope: scope, SessionID: sessionID, Messages: msgs}})
	if err != nil {
		return imprint.AppendResult{}, dbErr("append messages", err)
	}
	return res[0], nil
}

// messageVecAdd is a message vector to add to the in-memory index once its
// transaction committed.
type messageVecAdd struct {
	seq       int64
	scope     imprint.Scope
	sessionID string
	m         imprint.Message
}

// appendBatches appends valid batches, in order, in one write transaction
// and returns each batch's result.
func (db *DB) appendBatches(ctx context.Context, batches []imprint.MessageBatch) ([]imprint.AppendResult, error) {
	now := imprint.Now()
	var out []imprint.AppendResult
	var vecAdds []messageVecAdd
	// The vectors and keyword documents are encoded before the
	// transaction: the single writer holds its lock for the SQL only.
	rows := make([][]messageRow, len(batches))
	for i, b := range batches {
		rows[i] = encodeMessages(b.Messages)
	}
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		out, vecAdds = out[:0], vecAdds[:0]
		a, err := db.newMessageAppender(ctx, tx)
		if err != nil {
			return nil, err
		}
		defer a.close()
		for i, b := range batches {
			res, err := a.append(ctx, b, rows[i], now, &vecAdds)
			if err != nil {
				return nil, err
			}
			out = append(out, res)
		}
		return func() {
			for _, v := range vecAdds {
				db.vecUpsert(imprint.KindMessage, v.m.Embedder, v.seq, v.m.ID, v.scope, v.sessionID, v.m.Workspace, true, v.m.Vec)
			}
		}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// messageAppender holds the statements of message appends within one
// write transaction.
type messageAppender struct {
	ins, upd, due, ensure, get, last *sql.Stmt
	fts                              *ftsWriter
}

func (db *DB) newMessageAppender(ctx context.Context, tx *sql.Tx) (*messageAppender, error) {
	a := &messageAppender{}
	var err error
	if a.ins, err = db.stmt(ctx, tx, messageInsertSQL); err != nil {
		return nil, err
	}
	if a.upd, err = db.stmt(ctx, tx, sessionAppendedSQL); err != nil {
		a.close()
		return nil, err
	}
	if a.due, err = db.stmt(ctx, tx, sessionMarkDueSQL); err != nil {
		a.close()
		return nil, err
	}
	if a.ensure, err = db.stmt(ctx, tx, sessionEnsureSQL); err != nil {
		a.close()
		return nil, err
	}
	if a.get, err = db.stmt(ctx, tx, sessionGetSQL); err != nil {
		a.close()
		return nil, err
	}
	if a.last, err = db.stmt(ctx, tx, lastSpeakerSQL); err != nil {
		a.close()
		return nil, err
	}
	if a.fts, err = db.newFTSWriter(ctx, tx, "message"); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

func (a *messageAppender) close() {
	for _, st := range []*sql.Stmt{a.ins, a.upd, a.due, a.ensure, a.get, a.last} {
		if st != nil {
			st.Close()
		}
	}
	if a.fts != nil {
		a.fts.close()
	}
}

// append records one batch inside the appender's transaction: the session is created when needed,
// ids already recorded for the session (or earlier in the batch) are
// duplicates, recorded user messages add to the round count, and the
// session is marked due when b.MarkDueAt asks for it. Vectors to index
// after the commit are added to vecAdds.
// messageRow is a message's columns encoded before its transaction: its
// vector as a blob and, when hasDoc, its keyword document (all but the
// batch's first message, whose document depends on the session's latest
// stored message, read in the transaction).
type messageRow struct {
	blob   []byte
	doc    messageDoc
	hasDoc bool
}

// encodeMessages encodes the rows of a batch's messages as append writes
// them: a message repeated in the batch is skipped there and answers
// nobody; each other one answers the one before it.
func encodeMessages(msgs []imprint.Message) []messageRow {
	rows := make([]messageRow, len(msgs))
	seen := make(map[string]bool, len(msgs))
	var prevSpeaker string
	first := true
	for i, m := range msgs {
		if seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		if len(m.Vec) > 0 {
			rows[i].blob = vector.Encode(m.Vec)
		}
		if !first {
			rows[i].doc, rows[i].hasDoc = newMessageDoc(m, prevSpeaker), true
		}
		first = false
		prevSpeaker = m.Speaker
	}
	return rows
}

func (a *messageAppender) append(ctx context.Context, b imprint.MessageBatch, rows []messageRow, now imprint.Time, vecAdds *[]messageVecAdd) (imprint.AppendResult, error) {
	var res imprint.AppendResult
	scope, sessionID := b.Scope, b.SessionID
	if _, err := a.ensure.ExecContext(ctx, scope.Tenant, scope.User, scope.Agent, batchWorkspace(b.Messages), sessionID, ts(now), ts(now)); err != nil {
		return res, err
	}
	seen := make(map[string]bool, len(b.Messages))
	rounds := 0
	var lastSeq int64
	// prevSpeaker is who said the turn a message answers (newMessageDoc):
	// the session's latest stored message, then each message of the batch
	// in turn (a duplicate is still a turn).
	var prevSpeaker string
	if err := a.last.QueryRowContext(ctx, append(scopeArgs(scope), sessionID)...).Scan(&prevSpeaker); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return res, err
	}
	for i, m := range b.Messages {
		if seen[m.ID] {
			res.Duplicates = append(res.Duplicates, m.ID)
			continue
		}
		seen[m.ID] = true
		rec := m.RecordedAt
		if rec.IsZero() {
			rec = now
		}
		blob, emb := rows[i].blob, ""
		if len(m.Vec) > 0 {
			emb = m.Embedder
		}
		r, err := a.ins.ExecContext(ctx, scope.Tenant, scope.User, scope.Agent, m.Workspace, sessionID, m.ID,
			string(m.Role), m.Content, ts(m.Timestamp), ts(rec), m.Speaker, blob, emb, len(m.Vec))
		if err != nil {
			return res, err
		}
		doc := rows[i].doc
		if !rows[i].hasDoc {
			doc = newMessageDoc(m, prevSpeaker)
		}
		prevSpeaker = m.Speaker
		if n, _ := r.RowsAffected(); n == 0 {
			res.Duplicates = append(res.Duplicates, m.ID)
			continue
		}
		seq, err := r.LastInsertId()
		if err != nil {
			return res, err
		}
		if err := a.fts.insertMessage(seq, doc); err != nil {
			return res, err
		}
		res.Inserted = append(res.Inserted, m.ID)
		lastSeq = max(lastSeq, seq)
		if m.Role == imprint.RoleUser {
			rounds++
		}
		if len(m.Vec) > 0 {
			*vecAdds = append(*vecAdds, messageVecAdd{seq: seq, scope: scope, sessionID: sessionID, m: m})
		}
	}
	if len(res.Inserted) > 0 {
		// last_seq and last_message_at let SessionsToExtract find
		// sessions with pending messages by index.
		if _, err := a.upd.ExecContext(ctx, append(append([]any{rounds, lastSeq, ts(now), ts(now)}, scopeArgs(scope)...), sessionID)...); err != nil {
			return res, err
		}
	}
	s, err := scanSession(a.get.QueryRowContext(ctx, append(scopeArgs(scope), sessionID)...))
	if err != nil {
		return res, err
	}
	if b.MarkDueAt > 0 && len(res.Inserted) > 0 && s.RoundsSinceExtraction >= b.MarkDueAt {
		if _, err := a.due.ExecContext(ctx, append([]any{ts(now)}, append(scopeArgs(scope), sessionID)...)...); err != nil {
			return res, err
		}
		s.ExtractionDue, s.UpdatedAt = true, now
	}
	res.Session = s
	return res, nil
}

// GetMessage returns the message, or ErrNotFound when it is not in scope.
func (db *DB) GetMessage(ctx context.Context, scope imprint.Scope, sessionID, id string) (imprint.Message, error) {
	if err := validScope(scope); err != nil {
		return imprint.Message{}, err
	}
	row := db.r.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages WHERE `+scopeWhere("")+` AND session_id = ? AND id = ?`,
		append(scopeArgs(scope), sessionID, id)...)
	m, err := scanMessage(row)
	if errors.Is(err, sql.ErrNoRows) {
		return m, imprint.NotFoundf("message %q not found", id)
	}
	return m, dbErr("get message", err)
}

func (db *DB) queryMessages(ctx context.Context, op, where string, args ...any) ([]imprint.Message, error) {
	return db.queryMessageCols(ctx, op, messageCols, where, args...)
}

// queryMessageCols is queryMessages reading cols (messageCols or
// messageColsNoVec).
func (db *DB) queryMessageCols(ctx context.Context, op, cols, where string, args ...any) ([]imprint.Message, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+cols+` FROM messages WHERE `+where, args...)
	return scanMessages(op, rows, err)
}

// scanMessages reads every message of a query's rows (err is the query's
// error) and closes them.
func scanMessages(op string, rows *sql.Rows, err error) ([]imprint.Message, error) {
	if err != nil {
		return nil, dbErr(op, err)
	}
	defer rows.Close()
	out := []imprint.Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, dbErr(op, err)
		}
		out = append(out, m)
	}
	return out, dbErr(op, rows.Err())
}

// PendingMessages returns up to limit messages after the session's
// extraction cursor, oldest first (all of them when limit <= 0), without
// their vectors (Vec and Embedder are empty; GetMessage has them):
// extraction, the only reader, never uses them.
func (db *DB) PendingMessages(ctx context.Context, scope imprint.Scope, sessionID string, limit int) ([]imprint.Message, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1
	}
	args := append(scopeArgs(scope), sessionID)
	args = append(args, append(scopeArgs(scope), sessionID, limit)...)
	return db.queryMessageStmt(ctx, "pending messages", pendingMessagesSQL, args...)
}

// The hot read statements of extraction, prepared once per DB (rsql).
var (
	pendingMessagesSQL = rsql(`SELECT ` + messageColsNoVec + ` FROM messages WHERE ` + scopeWhere("") + ` AND session_id = ?
		AND seq > COALESCE((SELECT cursor_seq FROM sessions WHERE ` + scopeWhere("") + ` AND id = ?), 0)
		ORDER BY seq LIMIT ?`)
	messagesBeforeSQL = rsql(`SELECT ` + messageColsNoVec + ` FROM messages WHERE ` + scopeWhere("") + ` AND session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`)
)

// CountPending counts the session's messages after its cursor.
func (db *DB) CountPending(ctx context.Context, scope imprint.Scope, sessionID string) (int, error) {
	if err := validScope(scope); err != nil {
		return 0, err
	}
	args := append(scopeArgs(scope), sessionID)
	args = append(args, append(scopeArgs(scope), sessionID)...)
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE `+scopeWhere("")+` AND session_id = ?
		AND seq > COALESCE((SELECT cursor_seq FROM sessions WHERE `+scopeWhere("")+` AND id = ?), 0)`, args...).Scan(&n)
	return n, dbErr("count pending", err)
}

// MessagesBefore returns up to limit of the newest messages with Seq below
// beforeSeq, oldest first, without their vectors (as PendingMessages).
func (db *DB) MessagesBefore(ctx context.Context, scope imprint.Scope, sessionID string, beforeSeq int64, limit int) ([]imprint.Message, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return []imprint.Message{}, nil
	}
	out, err := db.queryMessageStmt(ctx, "messages before", messagesBeforeSQL, append(scopeArgs(scope), sessionID, beforeSeq, limit)...)
	slices.Reverse(out)
	return out, err
}

// SetMessageVectors stores vectors for the session's messages that have
// none; messages that already have one, or are not in scope, are left alone.
func (db *DB) SetMessageVectors(ctx context.Context, scope imprint.Scope, sessionID string, vecs map[string][]float32, embedder string) error {
	if err := validScope(scope); err != nil {
		return err
	}
	if strings.TrimSpace(embedder) == "" {
		return imprint.Invalidf("embedder is required")
	}
	type set struct {
		seq int64
		id  string
		ws  string
		v   []float32
	}
	var done []set
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		done = done[:0]
		st, err := tx.PrepareContext(ctx, `UPDATE messages SET vec = ?, embedder = ?, dim = ?
			WHERE `+scopeWhere("")+` AND session_id = ? AND id = ? AND vec IS NULL RETURNING seq, workspace`)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		for id, v := range vecs {
			if len(v) == 0 {
				continue
			}
			var seq int64
			var ws string
			err := st.QueryRowContext(ctx, append([]any{vector.Encode(v), embedder, len(v)}, append(scopeArgs(scope), sessionID, id)...)...).Scan(&seq, &ws)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, err
			}
			done = append(done, set{seq, id, ws, v})
		}
		return func() {
			for _, d := range done {
				db.vecUpsert(imprint.KindMessage, embedder, d.seq, d.id, scope, sessionID, d.ws, true, d.v)
			}
		}, nil
	})
	return dbErr("set message vectors", err)
}

// queryMessageStmt is queryMessageCols over a registered read statement.
func (db *DB) queryMessageStmt(ctx context.Context, op, q string, args ...any) ([]imprint.Message, error) {
	st, err := db.readStmt(q)
	if err != nil {
		return nil, dbErr(op, err)
	}
	rows, err := st.QueryContext(ctx, args...)
	return scanMessages(op, rows, err)
}

// batchWorkspace is the workspace of the first message that names one.
func batchWorkspace(msgs []imprint.Message) string {
	for _, m := range msgs {
		if m.Workspace != "" {
			return m.Workspace
		}
	}
	return ""
}
