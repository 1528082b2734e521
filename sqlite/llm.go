package sqlite

import (
	"context"
	"database/sql"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// RecordLLMCall appends c to the call log; a zero At is the current time.
func (db *DB) RecordLLMCall(ctx context.Context, c imprint.LLMCall) error {
	if c.At.IsZero() {
		c.At = imprint.Now()
	}
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO llm_calls (op, provider, model, prompt_tokens, completion_tokens,
			estimated, latency_ms, outcome, attempt, at, tenant, user_id, agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.Op, c.Provider, c.Model, c.PromptTokens, c.CompletionTokens, boolInt(c.TokensEstimated),
			c.Latency.Milliseconds(), c.Outcome, c.Attempt, ts(c.At), c.Scope.Tenant, c.Scope.User, c.Scope.Agent)
		return nil, err
	})
	return dbErr("record llm call", err)
}

// LLMUsageByOp sums the calls recorded at or after since, by op. A call
// whose outcome is not "ok" counts as an error.
func (db *DB) LLMUsageByOp(ctx context.Context, since time.Time) (map[string]imprint.LLMUsage, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT op, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens),
		SUM(outcome <> 'ok'), SUM(latency_ms) FROM llm_calls WHERE at >= ? GROUP BY op`, ts(imprint.At(since)))
	if err != nil {
		return nil, dbErr("llm usage", err)
	}
	defer rows.Close()
	out := map[string]imprint.LLMUsage{}
	for rows.Next() {
		var op string
		var u imprint.LLMUsage
		if err := rows.Scan(&op, &u.Calls, &u.PromptTokens, &u.CompletionTokens, &u.Errors, &u.LatencyMS); err != nil {
			return nil, dbErr("llm usage", err)
		}
		out[op] = u
	}
	return out, dbErr("llm usage", rows.Err())
}

// LLMCallsOfScope returns the calls of scope (tenant, user and agent)
// recorded at or after since, oldest first, with their time, op, outcome
// tokens and latency: what llm.Budget counts and the viewer draws. ErrInvalid for an invalid scope.
func (db *DB) LLMCallsOfScope(ctx context.Context, scope imprint.Scope, since time.Time) ([]imprint.LLMCall, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT op, outcome, prompt_tokens, completion_tokens, latency_ms, at FROM llm_calls
		WHERE tenant = ? AND user_id = ? AND agent = ? AND at >= ? ORDER BY at`,
		scope.Tenant, scope.User, scope.Agent, ts(imprint.At(since)))
	if err != nil {
		return nil, dbErr("llm calls of scope", err)
	}
	defer rows.Close()
	var out []imprint.LLMCall
	for rows.Next() {
		c := imprint.LLMCall{Scope: scope}
		var at string
		var latencyMS int64
		if err := rows.Scan(&c.Op, &c.Outcome, &c.PromptTokens, &c.CompletionTokens, &latencyMS, &at); err != nil {
			return nil, dbErr("llm calls of scope", err)
		}
		c.Latency = time.Duration(latencyMS) * time.Millisecond
		c.At = parseTS(at)
		out = append(out, c)
	}
	return out, dbErr("llm calls of scope", rows.Err())
}
