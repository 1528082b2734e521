package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

// RetireMemory marks the live memory id forgotten at at; see
// imprint.MemoryCurator.
func (db *DB) RetireMemory(ctx context.Context, scope imprint.Scope, id string, at time.Time) (imprint.Memory, error) {
	m, err := db.GetMemory(ctx, scope, id)
	if err != nil {
		return m, err
	}
	if m.ForgottenAt != nil {
		return m, nil
	}
	if m.SupersededBy != nil {
		return m, imprint.Conflictf("memory %q is superseded by %q: forget its live version", id, *m.SupersededBy)
	}
	stamp := imprint.At(at)
	if stamp.IsZero() {
		stamp = imprint.Now()
	}
	tag, err := db.pool.Exec(ctx, `UPDATE memories SET forgotten_at = $1
		WHERE id = $2 AND tenant = $3 AND user_id = $4 AND agent = $5 AND superseded_by IS NULL AND forgotten_at IS NULL`,
		stamp.Time, id, scope.Tenant, scope.User, scope.Agent)
	if err != nil {
		return imprint.Memory{}, dbErr("retire memory", err)
	}
	if tag.RowsAffected() == 0 {
		return imprint.Memory{}, dbErr("retire memory", imprint.Conflictf("memory %q changed while it was being forgotten", id))
	}
	m.ForgottenAt = &stamp
	return m, nil
}

// PurgeMemories deletes the memories ids of scope with their index
// entries and vectors (all columns of their rows); see
// imprint.MemoryCurator.
func (db *DB) PurgeMemories(ctx context.Context, scope imprint.Scope, ids []string) ([]string, error) {
	return db.purge(ctx, "purge memories", `DELETE FROM memories WHERE id = $1 AND tenant = $2 AND user_id = $3 AND agent = $4
		RETURNING id`, scope, ids)
}

// PurgeMessages deletes the messages ids of the scope's session with their
// index entries and vectors; see imprint.MemoryCurator.
func (db *DB) PurgeMessages(ctx context.Context, scope imprint.Scope, sessionID string, ids []string) ([]string, error) {
	return db.purge(ctx, "purge messages", `DELETE FROM messages WHERE id = $1 AND tenant = $2 AND user_id = $3 AND agent = $4
		AND session_id = $5 RETURNING id`, scope, ids, sessionID)
}

// purge runs del (id, scope, then more) for each id in one transaction and
// returns the ids deleted, in the order given.
func (db *DB) purge(ctx context.Context, op, del string, scope imprint.Scope, ids []string, more ...any) ([]string, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	var deleted []string
	err := db.tx(ctx, func(tx pgx.Tx) error {
		deleted = []string{}
		for _, id := range ids {
			var got string
			err := tx.QueryRow(ctx, del, append([]any{id, scope.Tenant, scope.User, scope.Agent}, more...)...).Scan(&got)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			deleted = append(deleted, id)
		}
		return nil
	})
	if err != nil {
		return nil, dbErr(op, err)
	}
	return deleted, nil
}
