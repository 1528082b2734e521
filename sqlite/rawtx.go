package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A rawTx is a write transaction run directly on the writer's driver
// connection, for the hottest write path (one memory per transaction,
// PutMemory). database/sql costs a goroutine and a re-parsed BEGIN per
// transaction and several allocations per statement; measured on
// one-memory transactions that was about a tenth of the time. The
// semantics are those of writeTx: BEGIN IMMEDIATE, statements, COMMIT, or
// ROLLBACK on any error; the connection is discarded when it cannot be
// brought back out of a transaction.
type rawTx struct {
	ctx   context.Context
	conn  driver.Conn
	cache *rawStmts
}

// rawStmts are the statements prepared on one driver connection, reused by
// every rawTx on it (the writer has one connection; when database/sql
// replaces it, the cache is rebuilt).
type rawStmts struct {
	conn driver.Conn
	st   map[string]driver.Stmt
}

func (c *rawStmts) close() {
	for _, st := range c.st {
		st.Close()
	}
	c.st = nil
}

// errRawConn marks a connection left in an unknown transaction state.
var errRawConn = errors.New("writer connection left inside a transaction")

// rawWriteTx runs fn in a write transaction on the driver connection and,
// after a successful commit, calls the function fn returned.
func (db *DB) rawWriteTx(ctx context.Context, fn func(tx *rawTx) (func(), error)) error {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	c, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer c.Close()
	var after func()
	err = c.Raw(func(dc any) error {
		conn, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("begin: driver connection %T", dc)
		}
		if db.raw == nil || db.raw.conn != conn {
			db.raw = &rawStmts{conn: conn, st: map[string]driver.Stmt{}}
		}
		tx := &rawTx{ctx: ctx, conn: conn, cache: db.raw}
		_, err := tx.exec("BEGIN IMMEDIATE")
		if err != nil {
			err = fmt.Errorf("begin: %w", err)
		} else if after, err = fn(tx); err == nil {
			// Once committing, ctx must not cut in: the driver reports
			// a context that ended during a statement as that
			// statement's error even when it completed, and a commit
			// reported failed but done would make the caller undo a
			// write the store kept.
			tx.ctx = context.WithoutCancel(ctx)
			if _, err = tx.exec("COMMIT"); err != nil {
				err = fmt.Errorf("commit: %w", err)
			}
		}
		if err == nil {
			return nil
		}
		// Roll back even when ctx ended (a BEGIN reported cut off may
		// have run), then drop the cached statements: database/sql may
		// discard this connection after an error, and SQLite keeps a
		// closed connection open while statements of it remain.
		tx.ctx = context.WithoutCancel(ctx)
		_, rerr := tx.exec("ROLLBACK")
		db.raw.close()
		db.raw = nil
		if rerr != nil && !isNoTx(rerr) {
			// database/sql closes a connection that answers
			// ErrBadConn; SQLite rolls back when it closes.
			return errors.Join(err, errRawConn, driver.ErrBadConn)
		}
		return err
	})
	if err != nil {
		return err
	}
	db.committed(after)
	return nil
}

// isNoTx reports an error of ROLLBACK with no transaction open (SQLite
// already rolled back, e.g. after an interrupt).
func isNoTx(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no transaction is active")
}

// stmt returns q prepared on the transaction's connection.
func (tx *rawTx) stmt(q string) (driver.Stmt, error) {
	if st := tx.cache.st[q]; st != nil {
		return st, nil
	}
	p, ok := tx.conn.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("driver connection %T cannot prepare with a context", tx.conn)
	}
	st, err := p.PrepareContext(tx.ctx, q)
	if err != nil {
		return nil, fmt.Errorf("prepare %.40q: %w", q, err)
	}
	tx.cache.st[q] = st
	return st, nil
}

// named converts args to driver values (ints widen to int64).
func named(args []any) ([]driver.NamedValue, error) {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int:
			a = int64(v)
		case nil, int64, float64, bool, []byte, string:
		default:
			return nil, fmt.Errorf("argument %d: unsupported type %T", i+1, a)
		}
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out, nil
}

// exec runs q with args.
func (tx *rawTx) exec(q string, args ...any) (driver.Result, error) {
	st, err := tx.stmt(q)
	if err != nil {
		return nil, err
	}
	nv, err := named(args)
	if err != nil {
		return nil, err
	}
	return st.(driver.StmtExecContext).ExecContext(tx.ctx, nv)
}

// queryInt64 runs q and returns the first column of its first row; ok is
// false when it returns no row.
func (tx *rawTx) queryInt64(q string, args ...any) (n int64, ok bool, err error) {
	st, err := tx.stmt(q)
	if err != nil {
		return 0, false, err
	}
	nv, err := named(args)
	if err != nil {
		return 0, false, err
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(tx.ctx, nv)
	if err != nil {
		return 0, false, err
	}
	dest := make([]driver.Value, len(rows.Columns()))
	err = rows.Next(dest)
	if cerr := rows.Close(); err == nil || errors.Is(err, io.EOF) {
		if cerr != nil {
			return 0, false, cerr
		}
	}
	if errors.Is(err, io.EOF) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	v, ok := dest[0].(int64)
	if !ok {
		return 0, false, fmt.Errorf("query %.40q: first column is %T, not an integer", q, dest[0])
	}
	return v, true, nil
}

// closeRaw closes the statements of the raw write path; Close calls it
// before closing the writer, which SQLite cannot fully close while
// statements remain.
func (db *DB) closeRaw(ctx context.Context) error {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if db.raw == nil {
		return nil
	}
	c, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		if dc == any(db.raw.conn) {
			db.raw.close()
		}
		db.raw = nil
		return nil
	})
}
