package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// writerSQL lists the statements of the write path, prepared once on the
// writer connection when the store opens (prepareWriter) instead of in
// every transaction. Register a statement with wsql at package level.
var writerSQL []string

// wsql registers q as a write-path statement and returns it.
func wsql(q string) string {
	writerSQL = append(writerSQL, q)
	return q
}

// prepareWriter prepares every registered write-path statement on the
// writer connection. It runs at Open, after the migrations and before any
// transaction, since preparing on the single writer connection would wait
// forever while a transaction holds it.
func (db *DB) prepareWriter(ctx context.Context) error {
	db.wst = make(map[string]*sql.Stmt, len(writerSQL))
	for _, q := range writerSQL {
		if db.wst[q] != nil {
			continue
		}
		st, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %.40q: %w", q, err)
		}
		db.wst[q] = st
	}
	return nil
}

// stmt returns q as a statement of tx: the statement prepared at Open,
// bound to tx without preparing again (the writer has one connection), or,
// for an unregistered query, one prepared now. Statements of tx close with
// it.
func (db *DB) stmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	if st := db.wst[q]; st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, q)
}

// closeWriterStmts closes the statements prepareWriter and prepareReader
// made.
func (db *DB) closeWriterStmts() {
	for _, st := range db.wst {
		st.Close()
	}
	for _, st := range db.rst {
		st.Close()
	}
	db.wst, db.rst = nil, nil
}

// readerSQL lists the hot read statements (extraction reads a session's
// pending messages and the messages before each window over and over, and
// parsing those queries cost more than running them), prepared once on
// the read pool at Open; database/sql prepares each on a pool connection
// the first time it runs there. Register one with rsql at package level.
var readerSQL []string

// rsql registers q as a read-path statement and returns it.
func rsql(q string) string {
	readerSQL = append(readerSQL, q)
	return q
}

// prepareReader prepares every registered read statement on the read pool.
func (db *DB) prepareReader(ctx context.Context) error {
	db.rst = make(map[string]*sql.Stmt, len(readerSQL))
	for _, q := range readerSQL {
		if db.rst[q] != nil {
			continue
		}
		st, err := db.r.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %.40q: %w", q, err)
		}
		db.rst[q] = st
	}
	return nil
}

// readStmt returns the read statement q, registered with rsql.
func (db *DB) readStmt(q string) (*sql.Stmt, error) {
	if st := db.rst[q]; st != nil {
		return st, nil
	}
	return nil, fmt.Errorf("read statement %.40q is not registered", q)
}
