package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/fsync"
)

// CopyTo writes a consistent copy of the database to path (VACUUM INTO: a
// fresh file without the free pages, so deleted text is not carried over).
// path must not exist.
func (db *DB) CopyTo(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err == nil {
		return imprint.Conflictf("copy database: %s exists", path)
	}
	if _, err := db.w.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("copy database: %w: %v", imprint.ErrUnavailable, err)
	}
	return nil
}

// SessionCursor is where a session's extraction stood, by message id.
type SessionCursor = imprint.SessionCursor

// DropRecords deletes every message and memory (rows, keyword indexes and
// vectors) and sets every session back to nothing extracted, keeping the
// sessions' other fields, the episodes, traces, jobs, API keys and call
// log: what `imprint rebuild` empties before it replays the JSONL shards.
// It returns where each session's extraction stood, by message id, so the
// rebuild can put the cursors back.
func (db *DB) DropRecords(ctx context.Context) ([]SessionCursor, error) {
	var cursors []SessionCursor
	err := db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		cursors = cursors[:0]
		rows, err := tx.QueryContext(ctx, `SELECT s.tenant, s.user_id, s.agent, s.id, m.id FROM sessions s
			JOIN messages m ON m.seq = s.cursor_seq AND m.tenant = s.tenant AND m.user_id = s.user_id AND m.agent = s.agent AND m.session_id = s.id
			WHERE s.cursor_seq > 0`)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var c SessionCursor
			if err := rows.Scan(&c.Scope.Tenant, &c.Scope.User, &c.Scope.Agent, &c.SessionID, &c.MessageID); err != nil {
				rows.Close()
				return nil, err
			}
			cursors = append(cursors, c)
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		for _, q := range []string{
			`DELETE FROM messages`,
			`DELETE FROM memories`,
			`INSERT INTO message_words (message_words) VALUES ('delete-all')`,
			`INSERT INTO message_fts (message_fts) VALUES ('delete-all')`,
			`INSERT INTO memory_words (memory_words) VALUES ('delete-all')`,
			`INSERT INTO memory_fts (memory_fts) VALUES ('delete-all')`,
			`UPDATE sessions SET cursor_seq = 0, rounds_since_extraction = 0, extraction_due = 0`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return nil, fmt.Errorf("%s: %w", q, err)
			}
		}
		return db.resetVectors, nil
	})
	return cursors, dbErr("drop records", err)
}

// resetVectors forgets the loaded message and memory vector indexes; they
// load again from the tables on next use.
func (db *DB) resetVectors() {
	db.vmu.Lock()
	defer db.vmu.Unlock()
	for k := range db.vecs {
		if k.kind == imprint.KindMessage || k.kind == imprint.KindMemory {
			delete(db.vecs, k)
		}
	}
}

// RebuiltFile is what RebuildFile did to the database file.
type RebuiltFile struct {
	// CarriedOver says the new database started as a copy of the old one
	// (its episodes, traces, keys and jobs kept); CarryError is why it did
	// not when the old file was there but could not be read.
	CarriedOver bool
	CarryError  error
	// Backup is where the previous database is kept
	// (path+RebuildBackupSuffix).
	Backup string
}

// RebuildFile recreates the database at path (imprint rebuild): a fresh
// copy of the current file when it opens (else an empty database), with
// its records dropped (DropRecords), is handed to fill with where each
// session's extraction stood; once fill succeeds, the current file is kept
// as path+RebuildBackupSuffix and the new one takes its place. On error
// the current file is left as it was. The caller keeps other writers away
// (no imprint serve, the import lock held).
func RebuildFile(ctx context.Context, path string, fill func(ctx context.Context, db *DB, cursors []SessionCursor) error) (RebuiltFile, error) {
	res := RebuiltFile{Backup: path + RebuildBackupSuffix}
	tmp := path + ".rebuild"
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, fmt.Errorf("rebuild: %w", err)
		}
	}
	if _, err := os.Stat(path); err == nil {
		old, err := Open(ctx, path)
		if err == nil {
			err = old.CopyTo(ctx, tmp)
			old.Close()
		}
		if err != nil {
			res.CarryError = err
			_ = os.Remove(tmp)
		} else {
			res.CarriedOver = true
		}
	}
	db, err := Open(ctx, tmp)
	if err != nil {
		return res, fmt.Errorf("rebuild: %w", err)
	}
	cursors, err := db.DropRecords(ctx)
	if err == nil {
		err = fill(ctx, db, cursors)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("rebuild: %w", err)
	}
	if _, err := os.Stat(path); err == nil {
		if err := os.Rename(path, res.Backup); err != nil {
			return res, fmt.Errorf("rebuild: keep the previous database: %w", err)
		}
		for _, ext := range []string{"-wal", "-shm"} {
			_ = os.Remove(path + ext)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return res, fmt.Errorf("rebuild: %w", err)
	}
	if err := fsync.Dir(filepath.Dir(path)); err != nil {
		return res, fmt.Errorf("rebuild: %w", err)
	}
	return res, nil
}
