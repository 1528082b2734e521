package sqlite

import (
	"context"
	"database/sql"
	"errors"

	imprint "github.com/imprint-dev/imprint"
)

// liveHashSQL tells whether a live memory of the scope has a content hash
// (by the memories_live_hash index).
var liveHashSQL = rsql(`SELECT 1 FROM memories WHERE ` + scopeWhere("") + ` AND content_hash = ? AND superseded_by IS NULL AND forgotten_at IS NULL LIMIT 1`)

// HasLiveMemoryHash reports whether a live memory of the scope has the
// content hash: FindMemoryByHash's answer to extraction's exact-text
// pre-check, without reading the memories, on a statement prepared once.
func (db *DB) HasLiveMemoryHash(ctx context.Context, scope imprint.Scope, hash string) (bool, error) {
	if err := validScope(scope); err != nil {
		return false, err
	}
	if hash == "" {
		return false, nil
	}
	st, err := db.readStmt(liveHashSQL)
	if err != nil {
		return false, dbErr("find memory by hash", err)
	}
	var one int
	err = st.QueryRowContext(ctx, append(scopeArgs(scope), hash)...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, dbErr("find memory by hash", err)
}
