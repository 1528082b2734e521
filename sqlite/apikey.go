package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

var _ imprint.APIKeyStore = (*DB)(nil)

const apiKeyCols = `id, name, tenant, user_id, agent, read_only, created_at, revoked_at`

func scanAPIKey(row interface{ Scan(...any) error }) (imprint.APIKey, error) {
	var k imprint.APIKey
	var ro int
	var created string
	var revoked sql.NullString
	err := row.Scan(&k.ID, &k.Name, &k.Scope.Tenant, &k.Scope.User, &k.Scope.Agent, &ro, &created, &revoked)
	k.ReadOnly = ro != 0
	k.CreatedAt = parseTS(created)
	if revoked.Valid {
		at := parseTS(revoked.String)
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
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, name, tenant, user_id, agent, read_only, token_hash, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, k.ID, k.Name, k.Scope.Tenant, k.Scope.User, k.Scope.Agent,
			boolInt(k.ReadOnly), tokenHash, ts(k.CreatedAt))
		if isUnique(err) {
			return nil, imprint.Conflictf("api key %q exists", k.ID)
		}
		return nil, err
	})
	return dbErr("create api key", err)
}

// APIKeyByTokenHash returns the key whose token hashes to h.
func (db *DB) APIKeyByTokenHash(ctx context.Context, h []byte) (imprint.APIKey, error) {
	k, err := scanAPIKey(db.r.QueryRowContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE token_hash = ?`, h))
	if errors.Is(err, sql.ErrNoRows) {
		return k, imprint.NotFoundf("no such api key")
	}
	return k, dbErr("get api key", err)
}

// ListAPIKeys returns every key, oldest first.
func (db *DB) ListAPIKeys(ctx context.Context) ([]imprint.APIKey, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys ORDER BY created_at, id`)
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
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, ts(at), id); err != nil {
			return nil, err
		}
		var err error
		k, err = scanAPIKey(tx.QueryRowContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, imprint.NotFoundf("api key %q not found", id)
		}
		return nil, err
	})
	return k, dbErr("revoke api key", err)
}

// HasAPIKeys reports whether any key was ever made.
func (db *DB) HasAPIKeys(ctx context.Context) (bool, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys)`).Scan(&n)
	return n != 0, dbErr("has api keys", err)
}
