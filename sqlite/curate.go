package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// listLimit turns a filter's Limit into SQL's: 0 is 100, a negative one
// is no limit (SQLite's LIMIT -1).
func listLimit(n int) int {
	switch {
	case n == 0:
		return 100
	case n < 0:
		return -1
	}
	return n
}

// RetireMemory marks the live memory id forgotten at at, taking it out of
// the keyword index and the live vectors; see imprint.MemoryCurator.
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
	var rid int64
	err = db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		err := tx.QueryRowContext(ctx, `UPDATE memories SET forgotten_at = ?
			WHERE id = ? AND `+scopeWhere("")+` AND superseded_by IS NULL AND forgotten_at IS NULL RETURNING rid`,
			append([]any{ts(stamp), id}, scopeArgs(scope)...)...).Scan(&rid)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, imprint.Conflictf("memory %q changed while it was being forgotten", id)
		}
		if err != nil {
			return nil, err
		}
		fts, err := db.newFTSWriter(ctx, tx, "memory")
		if err != nil {
			return nil, err
		}
		defer fts.close()
		if err := fts.remove(rid); err != nil {
			return nil, err
		}
		return func() { db.vecRemove(imprint.KindMemory, rid) }, nil
	})
	if err != nil {
		return imprint.Memory{}, dbErr("retire memory", err)
	}
	m.ForgottenAt = &stamp
	return m, nil
}

// PurgeMemories deletes the memories ids of scope with their index
// entries and vectors; see imprint.MemoryCurator.
func (db *DB) PurgeMemories(ctx context.Context, scope imprint.Scope, ids []string) ([]string, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	var deleted []string
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		deleted = deleted[:0]
		fts, err := db.newFTSWriter(ctx, tx, "memory")
		if err != nil {
			return nil, err
		}
		defer fts.close()
		var rids []int64
		for _, id := range ids {
			var rid int64
			err := tx.QueryRowContext(ctx, `DELETE FROM memories WHERE id = ? AND `+scopeWhere("")+` RETURNING rid`,
				append([]any{id}, scopeArgs(scope)...)...).Scan(&rid)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if err := fts.remove(rid); err != nil {
				return nil, err
			}
			rids = append(rids, rid)
			deleted = append(deleted, id)
		}
		if err := ftsScrub(ctx, tx, "memory", len(deleted)); err != nil {
			return nil, err
		}
		return func() {
			for _, rid := range rids {
				db.vecRemove(imprint.KindMemory, rid)
			}
		}, nil
	})
	if err != nil {
		return nil, dbErr("purge memories", err)
	}
	if err := db.purgeBackup(ctx, func(b *DB) error { _, err := b.PurgeMemories(ctx, scope, ids); return err }); err != nil {
		return deleted, err
	}
	return deleted, nil
}

// ftsScrub rewrites the kind's keyword indexes after n rows left them
// (FTS5 'optimize': every segment merged into one, the old ones freed and,
// with secure_delete, zeroed). A delete alone only marks the rows deleted,
// and a segment's terms (and the first term of each leaf page, in its
// _idx table) stay readable in the file. Its cost grows with the index;
// only purges pay it.
func ftsScrub(ctx context.Context, tx *sql.Tx, kind string, n int) error {
	if n == 0 {
		return nil
	}
	for _, t := range []string{kind + "_words", kind + "_fts"} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+t+` (`+t+`) VALUES ('optimize')`); err != nil {
			return fmt.Errorf("rewrite the keyword index %s: %w", t, err)
		}
	}
	return nil
}

// RebuildBackupSuffix ends the name a database had before imprint rebuild
// replaced it (imprint.db.before-rebuild), kept beside it.
const RebuildBackupSuffix = ".before-rebuild"

// purgeBackup runs purge on the rebuild backup beside db, when there is
// one, so a purge leaves the purged text in neither file (the backup runs
// with secure_delete too). Nothing else in the backup changes. An error
// names the backup; the purge can be run again.
func (db *DB) purgeBackup(ctx context.Context, purge func(*DB) error) error {
	path := db.path + RebuildBackupSuffix
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	b, err := Open(ctx, path)
	if err == nil {
		err = purge(b)
		if cerr := b.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("purge the rebuild backup %s (delete it, or run the purge again): %w", path, err)
	}
	return nil
}

// PurgeMessages deletes the messages ids of the scope's session with their
// index entries and vectors; see imprint.MemoryCurator.
func (db *DB) PurgeMessages(ctx context.Context, scope imprint.Scope, sessionID string, ids []string) ([]string, error) {
	if err := validScope(scope); err != nil {
		return nil, err
	}
	var deleted []string
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		deleted = deleted[:0]
		fts, err := db.newFTSWriter(ctx, tx, "message")
		if err != nil {
			return nil, err
		}
		defer fts.close()
		var seqs []int64
		for _, id := range ids {
			var seq int64
			err := tx.QueryRowContext(ctx, `DELETE FROM messages WHERE session_id = ? AND id = ? AND `+scopeWhere("")+` RETURNING seq`,
				append([]any{sessionID, id}, scopeArgs(scope)...)...).Scan(&seq)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if err := fts.remove(seq); err != nil {
				return nil, err
			}
			seqs = append(seqs, seq)
			deleted = append(deleted, id)
		}
		if err := ftsScrub(ctx, tx, "message", len(deleted)); err != nil {
			return nil, err
		}
		return func() {
			for _, seq := range seqs {
				db.vecRemove(imprint.KindMessage, seq)
			}
		}, nil
	})
	if err != nil {
		return nil, dbErr("purge messages", err)
	}
	if err := db.purgeBackup(ctx, func(b *DB) error { _, err := b.PurgeMessages(ctx, scope, sessionID, ids); return err }); err != nil {
		return deleted, err
	}
	return deleted, nil
}
