package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	imprint "github.com/imprint-dev/imprint"
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
type SessionCursor struct {
	Scope     imprint.Scope
	SessionID string
	// MessageID is the last message extraction consumed.
	MessageID string
}

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
