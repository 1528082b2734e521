package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

const messageCols = `seq, tenant, user_id, agent, workspace, session_id, id, role, content, ts, recorded_at, speaker, vec, embedder`

// messageColsNoVec reads messages without their vectors, for listings
// whose callers never use them.
const messageColsNoVec = `seq, tenant, user_id, agent, workspace, session_id, id, role, content, ts, recorded_at, speaker, NULL::real[], ''`

func scanMessage(row pgx.Row) (imprint.Message, error) {
	var m imprint.Message
	var tsv, rec *time.Time
	if err := row.Scan(&m.Seq, &m.Scope.Tenant, &m.Scope.User, &m.Scope.Agent, &m.Workspace, &m.SessionID,
		&m.ID, &m.Role, &m.Content, &tsv, &rec, &m.Speaker, &m.Vec, &m.Embedder); err != nil {
		return m, err
	}
	m.Timestamp, m.RecordedAt = tsOf(tsv), tsOf(rec)
	if len(m.Vec) == 0 {
		m.Vec = nil
	}
	return m, nil
}

// collectMessages reads every message of rows (err is the query's error).
func collectMessages(op string, rows pgx.Rows, err error) ([]imprint.Message, error) {
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

// sessionKey identifies a session across scopes.
func sessionKey(scope imprint.Scope, id string) string {
	return string(imprint.AppendKeyParts(nil, 0, scope.Tenant, scope.User, scope.Agent, id))
}

// lockSessions creates the sessions of batches when needed and locks
// their rows, in one order whatever the batches' order, so that appends to
// one session are serialized (a message's seq is then above every seq an
// extraction of its session has seen) and concurrent batches never
// deadlock.
func lockSessions(ctx context.Context, tx pgx.Tx, batches []imprint.MessageBatch, now imprint.Time) error {
	type sess struct {
		scope imprint.Scope
		id    string
		key   string
		ws    string
	}
	seen := map[string]bool{}
	var all []sess
	for _, b := range batches {
		k := sessionKey(b.Scope, b.SessionID)
		if !seen[k] {
			seen[k] = true
			all = append(all, sess{b.Scope, b.SessionID, k, batchWorkspace(b.Messages)})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].key < all[j].key })
	for _, s := range all {
		if err := ensureSession(ctx, tx, s.scope, s.id, s.ws, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND id = $4 FOR UPDATE`,
			s.scope.Tenant, s.scope.User, s.scope.Agent, s.id); err != nil {
			return err
		}
	}
	return nil
}

// appendBatches appends valid batches, in order, in one transaction and
// returns each batch's result.
func (db *DB) appendBatches(ctx context.Context, batches []imprint.MessageBatch) ([]imprint.AppendResult, error) {
	now := imprint.Now()
	var out []imprint.AppendResult
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		if err := lockSessions(ctx, tx, batches, now); err != nil {
			return err
		}
		for _, b := range batches {
			res, err := appendBatch(ctx, tx, b, now)
			if err != nil {
				return err
			}
			out = append(out, res)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, b := range batches {
		for _, m := range b.Messages {
			db.noteVectors(ctx, "messages", m.Embedder, len(m.Vec), "vec")
		}
	}
	return out, nil
}

// messageInsertSQL inserts one message with its keyword index columns
// ($15 its words, $16 its dates, $17 its speaker's words, $18 its CJK
// runs); no row when the id is recorded for the session.
const messageInsertSQL = `INSERT INTO messages
	(tenant, user_id, agent, workspace, session_id, id, role, content, ts, recorded_at, speaker, vec, embedder, dim,
	 words, who, cjk)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
	 setweight(to_tsvector('imprint', $15), 'A') || setweight(to_tsvector('imprint', $16), 'B'),
	 to_tsvector('imprint', $17), $18)
	ON CONFLICT (tenant, user_id, agent, session_id, id) DO NOTHING RETURNING seq`

// appendBatch records one batch inside tx (its session exists and is
// locked): ids already recorded for the session (or earlier in the batch)
// are duplicates, recorded user messages add to the round count, and the
// session is marked due when b.MarkDueAt asks for it.
func appendBatch(ctx context.Context, tx pgx.Tx, b imprint.MessageBatch, now imprint.Time) (imprint.AppendResult, error) {
	var res imprint.AppendResult
	scope, sessionID := b.Scope, b.SessionID
	seen := make(map[string]bool, len(b.Messages))
	rounds := 0
	var lastSeq int64
	// prevSpeaker is who said the turn a message answers: the session's
	// latest stored message, then each message of the batch in turn.
	var prevSpeaker string
	err := tx.QueryRow(ctx, `SELECT speaker FROM messages WHERE tenant = $1 AND user_id = $2 AND agent = $3
		AND session_id = $4 ORDER BY seq DESC LIMIT 1`, scope.Tenant, scope.User, scope.Agent, sessionID).Scan(&prevSpeaker)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return res, err
	}
	for _, m := range b.Messages {
		if seen[m.ID] {
			res.Duplicates = append(res.Duplicates, m.ID)
			continue
		}
		seen[m.ID] = true
		rec := m.RecordedAt
		if rec.IsZero() {
			rec = now
		}
		emb := ""
		if len(m.Vec) > 0 {
			emb = m.Embedder
		}
		doc := keyword.NewMessageDoc(m.Content, m.Timestamp.Time, m.Speaker, prevSpeaker)
		prevSpeaker = m.Speaker
		words, cjk := keyword.IndexTexts(doc.Text)
		who, _ := keyword.IndexTexts(doc.Who)
		var seq int64
		err := tx.QueryRow(ctx, messageInsertSQL, scope.Tenant, scope.User, scope.Agent, m.Workspace, sessionID, m.ID,
			string(m.Role), m.Content, tsArg(m.Timestamp), rec.Time, m.Speaker, vecArg(m.Vec), emb, len(m.Vec),
			words, doc.Date, who, cjk).Scan(&seq)
		if errors.Is(err, pgx.ErrNoRows) {
			res.Duplicates = append(res.Duplicates, m.ID)
			continue
		}
		if err != nil {
			return res, err
		}
		res.Inserted = append(res.Inserted, m.ID)
		lastSeq = max(lastSeq, seq)
		if m.Role == imprint.RoleUser {
			rounds++
		}
	}
	if len(res.Inserted) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE sessions SET rounds_since_extraction = rounds_since_extraction + $1,
			last_seq = GREATEST(last_seq, $2), last_message_at = $3, updated_at = $3
			WHERE tenant = $4 AND user_id = $5 AND agent = $6 AND id = $7`,
			rounds, lastSeq, now.Time, scope.Tenant, scope.User, scope.Agent, sessionID); err != nil {
			return res, err
		}
	}
	s, err := getSession(ctx, tx, scope, sessionID)
	if err != nil {
		return res, err
	}
	if b.MarkDueAt > 0 && len(res.Inserted) > 0 && s.RoundsSinceExtraction >= b.MarkDueAt {
		if _, err := tx.Exec(ctx, `UPDATE sessions SET extraction_due = true, updated_at = $1
			WHERE tenant = $2 AND user_id = $3 AND agent = $4 AND id = $5`,
			now.Time, scope.Tenant, scope.User, scope.Agent, sessionID); err != nil {
			return res, err
		}
		s.ExtractionDue, s.UpdatedAt = true, now
	}
	res.Session = s
	return res, nil
}

// SupportsBatchAppend implements imprint.BatchAppender: always true.
func (db *DB) SupportsBatchAppend() bool { return true }

// AppendMessageBatches records the batches, in order, in one transaction;
// each batch's result is what AppendMessages would have returned had the
// batches been appended one after another. ErrInvalid, before anything is
// written, when a batch has an empty scope, session id or message id.
func (db *DB) AppendMessageBatches(ctx context.Context, batches []imprint.MessageBatch) ([]imprint.AppendResult, error) {
	for i, b := range batches {
		if err := imprint.CheckAppend(b.Scope, b.SessionID, b.Messages); err != nil {
			return nil, fmt.Errorf("batches[%d]: %w", i, err)
		}
	}
	if len(batches) == 0 {
		return []imprint.AppendResult{}, nil
	}
	res, err := db.appendBatches(ctx, batches)
	if err != nil {
		return nil, dbErr("append message batches", err)
	}
	return res, nil
}

// GetMessage returns the message, or ErrNotFound when it is not in scope.
func (db *DB) GetMessage(ctx context.Context, scope imprint.Scope, sessionID, id string) (imprint.Message, error) {
	if err := validScope(scope); err != nil {
		return imprint.Message{}, err
	}
	m, err := scanMessage(db.pool.QueryRow(ctx, `SELECT `+messageCols+` FROM messages
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $4 AND id = $5`,
		scope.Tenant, scope.User, scope.Agent, sessionID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return m, imprint.NotFoundf("message %q not found", id)
	}
	return m, dbErr("get message", err)
}

// PendingMessages returns up to limit messages after the session's
// extraction cursor, oldest first (all of them when limit <= 0), without
// their vectors.
func (db *DB) PendingMessages(ctx context.Context, scope imprint.Scope, sessionID string, limit int) ([]imprint.Message, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	var lim any
	if limit > 0 {
		lim = limit
	}
	rows, err := db.pool.Query(ctx, `SELECT `+messageColsNoVec+` FROM messages
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $4
		AND seq > COALESCE((SELECT cursor_seq FROM sessions WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND id = $4), 0)
		ORDER BY seq LIMIT $5`, scope.Tenant, scope.User, scope.Agent, sessionID, lim)
	return collectMessages("pending messages", rows, err)
}

// CountPending counts the session's messages after its cursor.
func (db *DB) CountPending(ctx context.Context, scope imprint.Scope, sessionID string) (int, error) {
	if err := validScope(scope); err != nil {
		return 0, err
	}
	var n int
	err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM messages
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $4
		AND seq > COALESCE((SELECT cursor_seq FROM sessions WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND id = $4), 0)`,
		scope.Tenant, scope.User, scope.Agent, sessionID).Scan(&n)
	return n, dbErr("count pending", err)
}

// MessagesBefore returns up to limit of the newest messages with Seq below
// beforeSeq, oldest first, without their vectors.
func (db *DB) MessagesBefore(ctx context.Context, scope imprint.Scope, sessionID string, beforeSeq int64, limit int) ([]imprint.Message, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return []imprint.Message{}, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+messageColsNoVec+` FROM messages
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND session_id = $4 AND seq < $5 ORDER BY seq DESC LIMIT $6`,
		scope.Tenant, scope.User, scope.Agent, sessionID, beforeSeq, limit)
	out, err := collectMessages("messages before", rows, err)
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
	err := db.tx(ctx, func(tx pgx.Tx) error {
		for id, v := range vecs {
			if len(v) == 0 {
				continue
			}
			if _, err := tx.Exec(ctx, `UPDATE messages SET vec = $1, embedder = $2, dim = $3
				WHERE tenant = $4 AND user_id = $5 AND agent = $6 AND session_id = $7 AND id = $8 AND vec IS NULL`,
				v, embedder, len(v), scope.Tenant, scope.User, scope.Agent, sessionID, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		for _, v := range vecs {
			db.noteVectors(ctx, "messages", embedder, len(v), "vec")
		}
	}
	return dbErr("set message vectors", err)
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
