package sqlite

import (
	"context"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/rowscan"
)

// The store reads every record as it is for a copy (imprint migrate).
var _ imprint.Dumper = (*DB)(nil)

// SupportsDump implements imprint.Dumper: always true.
func (db *DB) SupportsDump() bool { return true }

// DumpCounts implements imprint.Dumper.
func (db *DB) DumpCounts(ctx context.Context) (imprint.DumpCounts, error) {
	var c imprint.DumpCounts
	err := db.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM sessions), (SELECT count(*) FROM messages), (SELECT count(*) FROM memories),
		(SELECT count(*) FROM episodes), (SELECT count(*) FROM traces), (SELECT count(*) FROM api_keys),
		(SELECT count(*) FROM llm_calls)`).
		Scan(&c.Sessions, &c.Messages, &c.Memories, &c.Episodes, &c.Traces, &c.APIKeys, &c.LLMCalls)
	return c, dbErr("dump counts", err)
}

// DumpSessions implements imprint.Dumper, in row order.
func (db *DB) DumpSessions(ctx context.Context, after string, limit int) ([]imprint.SessionState, string, error) {
	from, err := imprint.ParseRowPosition(after)
	if err != nil {
		return nil, after, err
	}
	// The select list is the outer query's: sessionCols are s's columns.
	rows, err := db.r.QueryContext(ctx, `SELECT s.rid, `+sessionCols+`,
		COALESCE((SELECT m.id FROM messages m WHERE m.tenant = s.tenant AND m.user_id = s.user_id AND m.agent = s.agent
			AND m.session_id = s.id AND m.seq <= s.cursor_seq ORDER BY m.seq DESC LIMIT 1), '')
		FROM sessions s WHERE s.rid > ? ORDER BY s.rid LIMIT ?`, from, limit)
	if err != nil {
		return nil, after, dbErr("dump sessions", err)
	}
	defer rows.Close()
	out := []imprint.SessionState{}
	last := from
	for rows.Next() {
		var cursorID string
		s, err := scanSession(rowscan.With(rows, []any{&last}, []any{&cursorID}))
		if err != nil {
			return nil, after, dbErr("dump sessions", err)
		}
		out = append(out, imprint.SessionState{Session: s, CursorMessageID: cursorID})
	}
	return out, imprint.RowPosition(last), dbErr("dump sessions", rows.Err())
}

// DumpMessages implements imprint.Dumper, in sequence order.
func (db *DB) DumpMessages(ctx context.Context, after string, limit int) ([]imprint.Message, string, error) {
	from, err := imprint.ParseRowPosition(after)
	if err != nil {
		return nil, after, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+messageCols+` FROM messages WHERE seq > ? ORDER BY seq LIMIT ?`, from, limit)
	if err != nil {
		return nil, after, dbErr("dump messages", err)
	}
	defer rows.Close()
	out := []imprint.Message{}
	last := from
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, after, dbErr("dump messages", err)
		}
		last = m.Seq
		out = append(out, m)
	}
	return out, imprint.RowPosition(last), dbErr("dump messages", rows.Err())
}

// DumpMemories implements imprint.Dumper, in row order.
func (db *DB) DumpMemories(ctx context.Context, after string, limit int) ([]imprint.Memory, string, error) {
	from, err := imprint.ParseRowPosition(after)
	if err != nil {
		return nil, after, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT m.rid, `+memoryCols+` FROM memories m WHERE m.rid > ? ORDER BY m.rid LIMIT ?`, from, limit)
	if err != nil {
		return nil, after, dbErr("dump memories", err)
	}
	defer rows.Close()
	out := []imprint.Memory{}
	last := from
	for rows.Next() {
		var rid int64
		m, err := scanMemory(rowscan.With(rows, []any{&rid}, nil))
		if err != nil {
			return nil, after, dbErr("dump memories", err)
		}
		last = rid
		out = append(out, m)
	}
	return out, imprint.RowPosition(last), dbErr("dump memories", rows.Err())
}

// DumpCaptures implements imprint.Dumper, in row order: each episode with
// every turn (the rows of an open one too) and its traces by step.
func (db *DB) DumpCaptures(ctx context.Context, after string, limit int) ([]imprint.Capture, string, error) {
	from, err := imprint.ParseRowPosition(after)
	if err != nil {
		return nil, after, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT rowid, `+episodeCols+` FROM episodes WHERE rowid > ? ORDER BY rowid LIMIT ?`, from, limit)
	if err != nil {
		return nil, after, dbErr("dump episodes", err)
	}
	out := []imprint.Capture{}
	at := map[string]int{}
	last := from
	for rows.Next() {
		ep, err := scanEpisode(rowscan.With(rows, []any{&last}, nil))
		if err != nil {
			rows.Close()
			return nil, after, dbErr("dump episodes", err)
		}
		at[ep.ID] = len(out)
		out = append(out, imprint.Capture{Episode: ep, Traces: []imprint.Trace{}})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, after, dbErr("dump episodes", err)
	}
	for i := range out {
		if err := withTurnRows(ctx, db.r, &out[i].Episode); err != nil {
			return nil, after, dbErr("dump episodes", err)
		}
	}
	if len(out) == 0 {
		return out, imprint.RowPosition(last), nil
	}
	trows, err := db.r.QueryContext(ctx, `SELECT `+traceCols+` FROM traces t JOIN episodes e ON e.id = t.episode_id
		WHERE e.rowid > ? AND e.rowid <= ? ORDER BY e.rowid, t.step_index, t.rid`, from, last)
	if err != nil {
		return nil, after, dbErr("dump traces", err)
	}
	defer trows.Close()
	for trows.Next() {
		t, err := scanTrace(trows)
		if err != nil {
			return nil, after, dbErr("dump traces", err)
		}
		if i, ok := at[t.EpisodeID]; ok {
			out[i].Traces = append(out[i].Traces, t)
		}
	}
	return out, imprint.RowPosition(last), dbErr("dump traces", trows.Err())
}

// DumpAPIKeys implements imprint.Dumper.
func (db *DB) DumpAPIKeys(ctx context.Context) ([]imprint.KeyRecord, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+apiKeyCols+`, token_hash FROM api_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, dbErr("dump api keys", err)
	}
	defer rows.Close()
	out := []imprint.KeyRecord{}
	for rows.Next() {
		var r imprint.KeyRecord
		k, err := scanAPIKey(rowscan.With(rows, nil, []any{&r.TokenHash}))
		if err != nil {
			return nil, dbErr("dump api keys", err)
		}
		r.Key = k
		out = append(out, r)
	}
	return out, dbErr("dump api keys", rows.Err())
}

// DumpLLMCalls implements imprint.Dumper, in row order.
func (db *DB) DumpLLMCalls(ctx context.Context, after string, limit int) ([]imprint.LLMCall, string, error) {
	from, err := imprint.ParseRowPosition(after)
	if err != nil {
		return nil, after, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT rid, op, provider, model, prompt_tokens, completion_tokens, estimated,
		latency_ms, outcome, attempt, at, tenant, user_id, agent FROM llm_calls WHERE rid > ? ORDER BY rid LIMIT ?`, from, limit)
	if err != nil {
		return nil, after, dbErr("dump llm calls", err)
	}
	defer rows.Close()
	out := []imprint.LLMCall{}
	last := from
	for rows.Next() {
		var c imprint.LLMCall
		var est int
		var latencyMS int64
		var at string
		if err := rows.Scan(&last, &c.Op, &c.Provider, &c.Model, &c.PromptTokens, &c.CompletionTokens, &est,
			&latencyMS, &c.Outcome, &c.Attempt, &at, &c.Scope.Tenant, &c.Scope.User, &c.Scope.Agent); err != nil {
			return nil, after, dbErr("dump llm calls", err)
		}
		c.TokensEstimated, c.Latency, c.At = est != 0, time.Duration(latencyMS)*time.Millisecond, parseTS(at)
		out = append(out, c)
	}
	return out, imprint.RowPosition(last), dbErr("dump llm calls", rows.Err())
}
