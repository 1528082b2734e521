package sqlite

import (
	"context"
	"database/sql"
	"runtime"
	"sync"
	"weak"

	imprint "github.com/imprint-dev/imprint"
)

// readStmts holds the hot read-path statements of one DB, prepared on its
// read pool the first time they are used (database/sql then prepares each
// on a pool connection once, when the statement first runs there) instead
// of on every call: extraction reads the pending messages of a session
// and the messages before each window over and over, and parsing those
// queries cost more than running them.
type readStmts struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// readStmtCache maps a DB (weakly, so a DB that is dropped is not kept
// alive) to its readStmts. The entry goes when the DB is collected.
var readStmtCache sync.Map // weak.Pointer[DB] -> *readStmts

// readStmt returns q prepared on the read pool, preparing it on first use.
// A DB that was closed returns the error of its closed pool.
func (db *DB) readStmt(ctx context.Context, q string) (*sql.Stmt, error) {
	key := weak.Make(db)
	v, ok := readStmtCache.Load(key)
	if !ok {
		var loaded bool
		v, loaded = readStmtCache.LoadOrStore(key, &readStmts{m: map[string]*sql.Stmt{}})
		if !loaded {
			runtime.AddCleanup(db, func(k weak.Pointer[DB]) { readStmtCache.Delete(k) }, key)
		}
	}
	rs := v.(*readStmts)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if st := rs.m[q]; st != nil {
		return st, nil
	}
	st, err := db.r.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	rs.m[q] = st
	return st, nil
}

// queryMessageStmt is queryMessageCols over a cached read statement.
func (db *DB) queryMessageStmt(ctx context.Context, op, q string, args ...any) ([]imprint.Message, error) {
	st, err := db.readStmt(ctx, q)
	if err != nil {
		return nil, dbErr(op, err)
	}
	rows, err := st.QueryContext(ctx, args...)
	return scanMessages(op, rows, err)
}
