package postgres

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
	err := db.pool.QueryRow(ctx, `SELECT
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
	rows, err := db.pool.Query(ctx, `SELECT s.rid, `+sessionCols+`,
		COALESCE((SELECT m.id FROM messages m WHERE m.tenant = s.tenant AND m.user_id = s.user_id AND m.agent = s.agent
			AND m.session_id = s.id AND m.seq <= s.cursor_seq ORDER BY m.seq DESC LIMIT 1), '')
		FROM sessions s WHERE s.rid > $1 ORDER BY s.rid LIMIT $2`, from, limit)
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
	rows, err := db.pool.Query(ctx, `SELECT `+messageCols+` FROM messages WHERE seq > $1 ORDER BY seq LIMIT $2`, from, limit)
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
	rows, err := db.pool.Query(ctx, `SELECT m.rid, `+memoryCols+` FROM memories m WHERE m.rid > $1 ORDER BY m.rid LIMIT $2`, from, limit)
	if err != nil {
		return nil, after, dbErr("dump memories", err)
	}
	defer rows.Close()
	out := []imprint.Memory{}
	last := from
	for rows.Next() {
		m, err := scanMemory(rowscan.With(rows, []any{&last}, nil))
		if err != nil {
			return nil, after, dbErr("dump memories", err)
		}
		out = append(out, m)
	}
	return out, imprint.RowPosition(last), dbErr("dump memories", rows.Err())
}

// DumpCaptures implements imprint.Dumper, in the order of the episodes'
// ids (episodes have no row id here; the position is the last id): each
// episode with every turn (the rows of an open one too) and its traces by
// step.
func (db *DB) DumpCaptures(ctx context.Context, after string, limit int) ([]imprint.Capture, string, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+episodeCols+` FROM episodes WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	eps, err := collectEpisodes("dump episodes", rows, err)
	if err != nil {
		return nil, after, err
	}
	out := make([]imprint.Capture, len(eps))
	at := map[string]int{}
	ids := make([]string, len(eps))
	for i := range eps {
		if err := withTurnRows(ctx, db.pool, &eps[i]); err != nil {
			return nil, after, dbErr("dump episodes", err)
		}
		out[i] = imprint.Capture{Episode: eps[i], Traces: []imprint.Trace{}}
		at[eps[i].ID], ids[i] = i, eps[i].ID
	}
	if len(eps) == 0 {
		return out, after, nil
	}
	rows, err = db.pool.Query(ctx, `SELECT `+traceCols+` FROM traces t WHERE t.episode_id = ANY($1)
		ORDER BY t.episode_id, t.step_index, t.rid`, ids)
	if err != nil {
		return nil, after, dbErr("dump traces", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTrace(rows)
		if err != nil {
			return nil, after, dbErr("dump traces", err)
		}
		out[at[t.EpisodeID]].Traces = append(out[at[t.EpisodeID]].Traces, t)
	}
	return out, ids[len(ids)-1], dbErr("dump traces", rows.Err())
}

// DumpAPIKeys implements imprint.Dumper.
func (db *DB) DumpAPIKeys(ctx context.Context) ([]imprint.KeyRecord, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+apiKeyCols+`, token_hash FROM api_keys ORDER BY created_at, id`)
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
	rows, err := db.pool.Query(ctx, `SELECT rid, op, provider, model, prompt_tokens, completion_tokens, estimated,
		latency_ms, outcome, attempt, at, tenant, user_id, agent FROM llm_calls WHERE rid > $1 ORDER BY rid LIMIT $2`, from, limit)
	if err != nil {
		return nil, after, dbErr("dump llm calls", err)
	}
	defer rows.Close()
	out := []imprint.LLMCall{}
	last := from
	for rows.Next() {
		var c imprint.LLMCall
		var latencyMS int64
		var at time.Time
		if err := rows.Scan(&last, &c.Op, &c.Provider, &c.Model, &c.PromptTokens, &c.CompletionTokens, &c.TokensEstimated,
			&latencyMS, &c.Outcome, &c.Attempt, &at, &c.Scope.Tenant, &c.Scope.User, &c.Scope.Agent); err != nil {
			return nil, after, dbErr("dump llm calls", err)
		}
		c.Latency, c.At = time.Duration(latencyMS)*time.Millisecond, imprint.At(at)
		out = append(out, c)
	}
	return out, imprint.RowPosition(last), dbErr("dump llm calls", rows.Err())
}
