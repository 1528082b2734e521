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

// sessionRef names one session of a call.
type sessionRef struct {
	scope imprint.Scope
	id    string
	key   string
	ws    string
}

// sessionArrays are the scope and id columns of sessions, for unnest.
func sessionArrays(all []sessionRef) (tenants, users, agents, ids []string) {
	n := len(all)
	tenants, users, agents, ids = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, s := range all {
		tenants[i], users[i], agents[i], ids[i] = s.scope.Tenant, s.scope.User, s.scope.Agent, s.id
	}
	return tenants, users, agents, ids
}

// lockSessions creates the sessions of batches when needed and locks
// their rows, in one order whatever the batches' order, so that appends to
// one session are serialized (a message's seq is then above every seq an
// extraction of its session has seen) and concurrent batches never
// deadlock. It returns the sessions in that order.
func lockSessions(ctx context.Context, tx pgx.Tx, batches []imprint.MessageBatch, now imprint.Time) ([]sessionRef, error) {
	seen := map[string]bool{}
	var all []sessionRef
	for _, b := range batches {
		k := sessionKey(b.Scope, b.SessionID)
		if !seen[k] {
			seen[k] = true
			all = append(all, sessionRef{b.Scope, b.SessionID, k, batchWorkspace(b.Messages)})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].key < all[j].key })
	tenants, users, agents, ids := sessionArrays(all)
	wss := make([]string, len(all))
	for i, s := range all {
		wss[i] = s.ws
	}
	// Rows are inserted, then locked, in the sorted order; a session
	// without a workspace takes its first batch's.
	if _, err := tx.Exec(ctx, `INSERT INTO sessions (tenant, user_id, agent, workspace, id, created_at, updated_at)
		SELECT k.t, k.u, k.a, k.w, k.i, $6, $6
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS k(t, u, a, i, w, o)
		ORDER BY k.o
		ON CONFLICT (tenant, user_id, agent, id) DO UPDATE SET workspace = excluded.workspace
		WHERE sessions.workspace = '' AND excluded.workspace <> ''`,
		tenants, users, agents, ids, wss, now.Time); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions s
		JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(t, u, a, i, o)
		ON s.tenant = k.t AND s.user_id = k.u AND s.agent = k.a AND s.id = k.i
		ORDER BY k.o FOR UPDATE OF s`, tenants, users, agents, ids); err != nil {
		return nil, err
	}
	return all, nil
}

// latestSpeakers returns who said the latest stored message of each of
// the sessions (the turn the next message answers), by session key, and
// the keys of the sessions that have no message stored.
func latestSpeakers(ctx context.Context, tx pgx.Tx, all []sessionRef) (map[string]string, map[string]bool, error) {
	tenants, users, agents, ids := sessionArrays(all)
	rows, err := tx.Query(ctx, `SELECT k.o, (SELECT m.speaker FROM messages m
		WHERE m.tenant = k.t AND m.user_id = k.u AND m.agent = k.a AND m.session_id = k.i ORDER BY m.seq DESC LIMIT 1)
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(t, u, a, i, o)`,
		tenants, users, agents, ids)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	speakers := make(map[string]string, len(all))
	empty := make(map[string]bool, len(all))
	for rows.Next() {
		var o int
		var sp *string
		if err := rows.Scan(&o, &sp); err != nil {
			return nil, nil, err
		}
		k := all[o-1].key
		if sp == nil {
			speakers[k], empty[k] = "", true
		} else {
			speakers[k] = *sp
		}
	}
	return speakers, empty, rows.Err()
}

// appendBatches appends valid batches, in order, in one transaction and
// returns each batch's result.
func (db *DB) appendBatches(ctx context.Context, batches []imprint.MessageBatch) ([]imprint.AppendResult, error) {
	now := imprint.Now()
	var out []imprint.AppendResult
	// The sessions without a message before (new ones, mostly), for the
	// table's growth (analyze.go).
	var newSessions int
	err := db.writeTx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		all, err := lockSessions(ctx, tx, batches, now)
		if err != nil {
			return err
		}
		speakers, empty, err := latestSpeakers(ctx, tx, all)
		if err != nil {
			return err
		}
		newSessions = len(empty)
		// Batches of distinct sessions go together: one statement for
		// their tsvectors, one round trip for their inserts and one for
		// their sessions. A session's second batch needs the speaker of
		// its first's last message recorded, so with a session repeated
		// the batches go one at a time.
		rounds := [][]imprint.MessageBatch{batches}
		if !distinctSessions(batches) {
			rounds = rounds[:0]
			for i := range batches {
				rounds = append(rounds, batches[i:i+1])
			}
		}
		for _, r := range rounds {
			res, err := db.appendRound(ctx, tx, r, now, speakers, empty)
			if err != nil {
				return err
			}
			// A session recorded into is no longer empty.
			for _, b := range r {
				delete(empty, sessionKey(b.Scope, b.SessionID))
			}
			out = append(out, res...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	inserted := 0
	for _, r := range out {
		inserted += len(r.Inserted)
	}
	db.grew("messages", inserted)
	db.grew("sessions", newSessions)
	for _, b := range batches {
		for _, m := range b.Messages {
			db.noteVectors(ctx, "messages", m.Embedder, len(m.Vec), "vec")
		}
	}
	return out, nil
}

// messageInsert inserts messages of any sessions, in their order; rows of
// messageRow follow. It returns the scope, session, id and seq of each row
// inserted; none for an id recorded for the session.
const (
	messageInsert = `INSERT INTO messages
	(tenant, user_id, agent, workspace, session_id, id, role, content, ts, recorded_at, speaker, vec, embedder, dim,
	 words, who, cjk, ntok) VALUES `
	messageInsertEnd = ` ON CONFLICT (tenant, user_id, agent, session_id, id) DO NOTHING
	RETURNING tenant, user_id, agent, session_id, id, seq`
	// messageRow is one message with its keyword index columns: the
	// tsvectors (tsvector.go) of the words (weight A) and dates (B) of
	// its text and of its speaker's words, its CJK runs and its length in
	// tokens (keyword.TokenCount).
	messageRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	 setweight(?::tsvector, 'A') || setweight(?::tsvector, 'B'), ?::tsvector, ?, ?)`
	messageRowArgs = 19
)

// appendMessageArgs appends the values of m's messageRow to args (rec its
// recording time; words, dates and who the tsvectors of its doc, cjk its
// CJK runs, ntok the doc's length in tokens).
func appendMessageArgs(args []any, scope imprint.Scope, sessionID string, m imprint.Message, rec imprint.Time,
	words, dates, who, cjk string, ntok int) []any {
	emb := ""
	if len(m.Vec) > 0 {
		emb = m.Embedder
	}
	return append(args, scope.Tenant, scope.User, scope.Agent, m.Workspace, sessionID, m.ID, string(m.Role), m.Content,
		tsArg(m.Timestamp), rec.Time, m.Speaker, vecArg(m.Vec), emb, len(m.Vec), words, dates, who, cjk, ntok)
}

// distinctSessions reports whether no two batches are of one session.
func distinctSessions(batches []imprint.MessageBatch) bool {
	seen := make(map[string]bool, len(batches))
	for _, b := range batches {
		k := sessionKey(b.Scope, b.SessionID)
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// appendPlan is one batch being recorded: the messages kept (not repeated
// in the batch), their recording times, keyword docs and CJK runs, and
// then the seq of each id inserted.
type appendPlan struct {
	b        imprint.MessageBatch
	key      string
	dup      []bool // dup[i]: message i repeats an id earlier in the batch
	keep     []imprint.Message
	recs     []imprint.Time
	docs     []string // each kept message's words, then its dates, then its speaker's words
	cjks     []string
	ntoks    []int // each kept message's doc length in tokens (keyword.TokenCount)
	inserted map[string]int64
}

// planAppend prepares batch b; prevSpeaker is who said the session's
// latest stored message.
func planAppend(b imprint.MessageBatch, now imprint.Time, prevSpeaker string) *appendPlan {
	p := &appendPlan{b: b, key: sessionKey(b.Scope, b.SessionID), dup: make([]bool, len(b.Messages)), inserted: map[string]int64{}}
	seen := make(map[string]bool, len(b.Messages))
	// prevSpeaker is who said the turn a message answers: the session's
	// latest stored message, then each message of the batch in turn.
	for i, m := range b.Messages {
		if seen[m.ID] {
			p.dup[i] = true
			continue
		}
		seen[m.ID] = true
		rec := m.RecordedAt
		if rec.IsZero() {
			rec = now
		}
		doc := keyword.NewMessageDoc(m.Content, m.Timestamp.Time, m.Speaker, prevSpeaker)
		prevSpeaker = m.Speaker
		words, cjk := keyword.IndexTexts(doc.Text)
		who, _ := keyword.IndexTexts(doc.Who)
		p.keep, p.recs, p.cjks = append(p.keep, m), append(p.recs, rec), append(p.cjks, cjk)
		p.docs = append(p.docs, words, doc.Date, who)
		p.ntoks = append(p.ntoks, keyword.TokenCount(words)+keyword.TokenCount(doc.Date)+keyword.TokenCount(who))
	}
	return p
}

// appendArgs appends the values of p's messageRows to args (tsv: the
// tsvectors of its docs).
func (p *appendPlan) appendArgs(args []any, tsv []string) []any {
	for i := range p.keep {
		args = appendMessageArgs(args, p.b.Scope, p.b.SessionID, p.keep[i], p.recs[i], tsv[3*i], tsv[3*i+1], tsv[3*i+2],
			p.cjks[i], p.ntoks[i])
	}
	return args
}

// readInserts reads the sessions, ids and seqs one queued insert returned
// into the plans, by session key.
func readInserts(br pgx.BatchResults, plans map[string]*appendPlan) error {
	r, err := br.Query()
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Next() {
		var scope imprint.Scope
		var sid, id string
		var seq int64
		if err := r.Scan(&scope.Tenant, &scope.User, &scope.Agent, &sid, &id, &seq); err != nil {
			return err
		}
		p := plans[sessionKey(scope, sid)]
		if p == nil {
			return fmt.Errorf("insert returned a message of session %q, not of the call", sid)
		}
		p.inserted[id] = seq
	}
	return r.Err()
}

// result sorts p's messages into inserted and duplicates, keeps speakers
// up to date, and returns the user rounds and the highest seq recorded.
func (p *appendPlan) result(speakers map[string]string) (res imprint.AppendResult, rounds int, lastSeq int64) {
	for i, m := range p.b.Messages {
		seq, ok := p.inserted[m.ID]
		if p.dup[i] || !ok {
			res.Duplicates = append(res.Duplicates, m.ID)
			continue
		}
		res.Inserted = append(res.Inserted, m.ID)
		if seq > lastSeq {
			lastSeq = seq
			speakers[p.key] = m.Speaker
		}
		if m.Role == imprint.RoleUser {
			rounds++
		}
	}
	return res, rounds, lastSeq
}

// appendRound records batches of distinct sessions inside tx (their
// sessions exist and are locked; speakers holds who said each session's
// latest stored message and is kept up to date): ids already recorded for
// the session (or earlier in the batch) are duplicates, recorded user
// messages add to the round count, and a session is marked due when its
// batch's MarkDueAt asks for it. It costs one statement for the tsvectors
// of words not seen before, one round trip for all inserts (a COPY when
// every session is in empty, the keys of those with no message stored)
// and one for all sessions.
func (db *DB) appendRound(ctx context.Context, tx pgx.Tx, batches []imprint.MessageBatch, now imprint.Time, speakers map[string]string, empty map[string]bool) ([]imprint.AppendResult, error) {
	plans := make([]*appendPlan, len(batches))
	var docs []string
	allEmpty := !db.noCopy
	for i, b := range batches {
		plans[i] = planAppend(b, now, speakers[sessionKey(b.Scope, b.SessionID)])
		docs = append(docs, plans[i].docs...)
		allEmpty = allEmpty && empty[plans[i].key]
	}
	var err error
	if allEmpty {
		err = db.copyRound(ctx, tx, plans, docs)
	} else {
		err = db.insertRound(ctx, tx, plans, docs)
	}
	if err != nil {
		return nil, err
	}
	return db.updateSessions(ctx, tx, plans, now, speakers)
}

// insertRound records the messages of plans, batches of distinct sessions,
// with multi-row INSERTs that skip the ids stored already, and fills each
// plan's inserted seqs. docs are the plans' docs in turn.
func (db *DB) insertRound(ctx context.Context, tx pgx.Tx, plans []*appendPlan, docs []string) error {
	tsv, err := db.tsvectors(ctx, tx, docs...)
	if err != nil {
		return err
	}
	// All the messages in statements of maxRowsPerInsert rows, with the
	// generic plans of the transaction (insertNewCaptures says why).
	var rowArgs []any
	byKey := make(map[string]*appendPlan, len(plans))
	off := 0
	for _, p := range plans {
		rowArgs = p.appendArgs(rowArgs, tsv[off:off+len(p.docs)])
		off += len(p.docs)
		byKey[p.key] = p
	}
	q := &pgx.Batch{}
	n := queueRows(q, messageInsert, messageRow, messageInsertEnd, messageRowArgs, rowArgs)
	return sendBatch(ctx, tx, q, func(br pgx.BatchResults) error {
		for range n {
			if err := readInserts(br, byKey); err != nil {
				return err
			}
		}
		return nil
	})
}

// updateSessions adds the recorded messages of plans to their sessions'
// round counts, marks them due as their batches ask, and returns each
// batch's result (speakers kept up to date), in one round trip.
func (db *DB) updateSessions(ctx context.Context, tx pgx.Tx, plans []*appendPlan, now imprint.Time, speakers map[string]string) ([]imprint.AppendResult, error) {
	out := make([]imprint.AppendResult, len(plans))
	q := &pgx.Batch{}
	for i, p := range plans {
		var rounds int
		var lastSeq int64
		out[i], rounds, lastSeq = p.result(speakers)
		scope := p.b.Scope
		if len(out[i].Inserted) > 0 {
			// The new messages count; the session becomes due when
			// MarkDueAt asks for it and the rounds reach it.
			q.Queue(`UPDATE sessions SET rounds_since_extraction = rounds_since_extraction + $1,
			last_seq = GREATEST(last_seq, $2), last_message_at = $3, updated_at = $3,
			extraction_due = extraction_due OR ($8 > 0 AND rounds_since_extraction + $1 >= $8)
			WHERE tenant = $4 AND user_id = $5 AND agent = $6 AND id = $7 RETURNING `+sessionCols,
				rounds, lastSeq, now.Time, scope.Tenant, scope.User, scope.Agent, p.b.SessionID, p.b.MarkDueAt)
		} else {
			q.Queue(`SELECT `+sessionCols+` FROM sessions
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND id = $4`, scope.Tenant, scope.User, scope.Agent, p.b.SessionID)
		}
	}
	err := sendBatch(ctx, tx, q, func(br pgx.BatchResults) error {
		for i, p := range plans {
			s, err := scanSession(br.QueryRow())
			if errors.Is(err, pgx.ErrNoRows) {
				return imprint.NotFoundf("session %q not found", p.b.SessionID)
			}
			if err != nil {
				return err
			}
			out[i].Session = s
		}
		return nil
	})
	return out, err
}

// sendBatch sends q on tx and hands its results to read, closing them.
func sendBatch(ctx context.Context, tx pgx.Tx, q *pgx.Batch, read func(pgx.BatchResults) error) error {
	if q.Len() == 0 {
		return nil
	}
	br := tx.SendBatch(ctx, q)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// SupportsBatchAppend implements imprint.BatchAppender: always true.
func (db *DB) SupportsBatchAppend() bool { return true }

var _ imprint.ConcurrentWriter = (*DB)(nil)

// SupportsConcurrentWrites implements imprint.ConcurrentWriter: true
// unless the pool has one connection (PGlite's socket serves one).
func (db *DB) SupportsConcurrentWrites() bool { return db.pool.Config().MaxConns > 1 }

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
