package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

var _ imprint.APIKeyStore = (*DB)(nil)

const apiKeyCols = `id, name, tenant, user_id, agent, read_only, created_at, revoked_at`

func scanAPIKey(row pgx.Row) (imprint.APIKey, error) {
	var k imprint.APIKey
	var created time.Time
	var revoked *time.Time
	err := row.Scan(&k.ID, &k.Name, &k.Scope.Tenant, &k.Scope.User, &k.Scope.Agent, &k.ReadOnly, &created, &revoked)
	k.CreatedAt = imprint.At(created)
	if revoked != nil {
		at := imprint.At(*revoked)
		k.RevokedAt = &at
	}
	return k, err
}

// CreateAPIKey stores k with the hash of its token.
func (db *DB) CreateAPIKey(ctx context.Context, k imprint.APIKey, tokenHash []byte) error {
	if strings.TrimSpace(k.ID) == "" {
		return imprint.Invalidf("api key id is required")
	}
	if len(tokenHash) == 0 {
		return imprint.Invalidf("api key token hash is required")
	}
	if err := k.Scope.Validate(); err != nil {
		return err
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = imprint.Now()
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO api_keys (id, name, tenant, user_id, agent, read_only, token_hash, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, k.ID, k.Name, k.Scope.Tenant, k.Scope.User, k.Scope.Agent,
		k.ReadOnly, tokenHash, k.CreatedAt.Time)
	if isUnique(err) {
		err = imprint.Conflictf("api key %q exists", k.ID)
	}
	return dbErr("create api key", err)
}

// APIKeyByTokenHash returns the key whose token hashes to h.
func (db *DB) APIKeyByTokenHash(ctx context.Context, h []byte) (imprint.APIKey, error) {
	k, err := scanAPIKey(db.pool.QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE token_hash = $1`, h))
	if errors.Is(err, pgx.ErrNoRows) {
		return k, imprint.NotFoundf("no such api key")
	}
	return k, dbErr("get api key", err)
}

// ListAPIKeys returns every key, oldest first.
func (db *DB) ListAPIKeys(ctx context.Context) ([]imprint.APIKey, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+apiKeyCols+` FROM api_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, dbErr("list api keys", err)
	}
	defer rows.Close()
	var out []imprint.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, dbErr("list api keys", err)
		}
		out = append(out, k)
	}
	return out, dbErr("list api keys", rows.Err())
}

// RevokeAPIKey marks the key revoked, keeping the first revocation time.
func (db *DB) RevokeAPIKey(ctx context.Context, id string, at imprint.Time) (imprint.APIKey, error) {
	var k imprint.APIKey
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, at.Time, id); err != nil {
			return err
		}
		var err error
		k, err = scanAPIKey(tx.QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE id = $1`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return imprint.NotFoundf("api key %q not found", id)
		}
		return err
	})
	return k, dbErr("revoke api key", err)
}

// HasAPIKeys reports whether any key was ever made.
func (db *DB) HasAPIKeys(ctx context.Context) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys)`).Scan(&ok)
	return ok, dbErr("has api keys", err)
}

// RecordLLMCall appends c to the call log; a zero At is the current time.
func (db *DB) RecordLLMCall(ctx context.Context, c imprint.LLMCall) error {
	if c.At.IsZero() {
		c.At = imprint.Now()
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO llm_calls (op, provider, model, prompt_tokens, completion_tokens,
		estimated, latency_ms, outcome, attempt, at, tenant, user_id, agent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		c.Op, c.Provider, c.Model, c.PromptTokens, c.CompletionTokens, c.TokensEstimated,
		c.Latency.Milliseconds(), c.Outcome, c.Attempt, c.At.Time, c.Scope.Tenant, c.Scope.User, c.Scope.Agent)
	return dbErr("record llm call", err)
}

// LLMUsageByOp sums the calls recorded at or after since, by op. A call
// whose outcome is not "ok" counts as an error.
func (db *DB) LLMUsageByOp(ctx context.Context, since time.Time) (map[string]imprint.LLMUsage, error) {
	rows, err := db.pool.Query(ctx, `SELECT op, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens),
		COUNT(*) FILTER (WHERE outcome <> 'ok'), SUM(latency_ms) FROM llm_calls WHERE at >= $1 GROUP BY op`, since)
	if err != nil {
		return nil, dbErr("llm usage", err)
	}
	defer rows.Close()
	out := map[string]imprint.LLMUsage{}
	for rows.Next() {
		var op string
		var u imprint.LLMUsage
		var pt, ct, lat int64
		if err := rows.Scan(&op, &u.Calls, &pt, &ct, &u.Errors, &lat); err != nil {
			return nil, dbErr("llm usage", err)
		}
		u.PromptTokens, u.CompletionTokens, u.LatencyMS = int(pt), int(ct), lat
		out[op] = u
	}
	return out, dbErr("llm usage", rows.Err())
}

// LLMCallsOfScope returns the calls of scope recorded at or after since,
// oldest first. ErrInvalid for an invalid scope.
func (db *DB) LLMCallsOfScope(ctx context.Context, scope imprint.Scope, since time.Time) ([]imprint.LLMCall, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT op, outcome, prompt_tokens, completion_tokens, latency_ms, at FROM llm_calls
		WHERE tenant = $1 AND user_id = $2 AND agent = $3 AND at >= $4 ORDER BY at, rid`,
		scope.Tenant, scope.User, scope.Agent, since)
	if err != nil {
		return nil, dbErr("llm calls of scope", err)
	}
	defer rows.Close()
	var out []imprint.LLMCall
	for rows.Next() {
		c := imprint.LLMCall{Scope: scope}
		var at time.Time
		var latencyMS int64
		if err := rows.Scan(&c.Op, &c.Outcome, &c.PromptTokens, &c.CompletionTokens, &latencyMS, &at); err != nil {
			return nil, dbErr("llm calls of scope", err)
		}
		c.Latency = time.Duration(latencyMS) * time.Millisecond
		c.At = imprint.At(at)
		out = append(out, c)
	}
	return out, dbErr("llm calls of scope", rows.Err())
}
