package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	imprint "github.com/imprint-dev/imprint"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

var _ imprint.Store = (*DB)(nil)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DB is an imprint.Store on one SQLite file. It is safe for concurrent use.
type DB struct {
	path string
	w    *sql.DB // one connection, BEGIN IMMEDIATE: all writes
	r    *sql.DB // read pool

	// wmu serializes write transactions together with the in-memory vector
	// index updates that follow their commit, so the index sees writes in
	// commit order.
	wmu sync.Mutex

	vmu  sync.Mutex
	vecs map[vecKey]*vecIndex

	// wst holds the write-path statements prepared on the writer
	// connection at Open (see stmt), rst the hot read statements prepared
	// on the read pool (see readStmt); read-only afterwards.
	wst, rst map[string]*sql.Stmt

	// ckpt checkpoints the WAL in the background (see checkpoint.go).
	ckpt *checkpointer

	// raw holds the statements of the raw write path (rawtx.go); wmu
	// guards it.
	raw *rawStmts

	// jobEngine, when set, takes the store's jobs (jobhook.go).
	jobEngine atomic.Pointer[jobEngineRef]

	closeOnce sync.Once
	closeErr  error
}

// pragmas are set on every connection. secure_delete zeroes the content
// of deleted rows and freed pages, so text replaced or deleted (an
// episode's old turns, a forgotten memory) cannot be read back from the
// file.
var pragmas = []string{
	"journal_mode(WAL)",
	"busy_timeout(5000)",
	"foreign_keys(1)",
	"synchronous(NORMAL)",
	"secure_delete(1)",
}

// Connection roles: the one writer, the read pool, the checkpointer.
const (
	roleWrite = iota
	roleRead
	roleCheckpoint
)

func dsn(path string, role int) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	q.Add("_pragma", "temp_store(MEMORY)")
	// The default 2 MB page cache makes index and FTS segment pages of a
	// 100k-row database miss on every write; the writer gets 8 MB, each
	// reader 16 MB. A larger writer cache does not speed up batch appends
	// and slows small transactions: SQLite walks the whole page-cache hash
	// when it ends each one, so one-memory commits ran 15-35 % slower at
	// 64 MB than at 8 MB.
	switch role {
	case roleWrite:
		q.Set("_txlock", "immediate")
		q.Add("_pragma", "cache_size(-8192)")
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstopPages))
	case roleRead:
		q.Add("_pragma", "query_only(1)")
		q.Add("_pragma", "cache_size(-16384)")
	case roleCheckpoint:
		// A checkpoint reads WAL frames and writes database pages; it
		// needs no cache of its own.
		q.Add("_pragma", "cache_size(-512)")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the SQLite database at path with WAL,
// a 5 s busy timeout, foreign keys, synchronous=NORMAL and secure_delete,
// and applies the embedded migrations that have not run yet. It returns an
// error of kind ErrInvalid for an empty path and ErrUnavailable when the
// file cannot be opened or migrated.
func Open(ctx context.Context, path string) (*DB, error) {
	if strings.TrimSpace(path) == "" {
		return nil, imprint.Invalidf("sqlite path is required")
	}
	w, err := sql.Open("sqlite", dsn(path, roleWrite))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: path, w: w, vecs: map[vecKey]*vecIndex{}}
	if err := db.migrate(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := db.prepareWriter(ctx); err != nil {
		db.closeWriterStmts()
		w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	r, err := sql.Open("sqlite", dsn(path, roleRead))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db.r = r
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := db.prepareReader(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	c, err := sql.Open("sqlite", dsn(path, roleCheckpoint))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w: %v", path, imprint.ErrUnavailable, err)
	}
	c.SetMaxOpenConns(1)
	c.SetMaxIdleConns(1)
	db.ckpt = newCheckpointer(c)
	return db, nil
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Close closes the connection pools; closing again returns the first
// Close's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() { db.closeErr = db.close() })
	return db.closeErr
}

func (db *DB) close() error {
	var errs []error
	if db.ckpt != nil {
		errs = append(errs, db.ckpt.close())
	}
	if db.w != nil {
		errs = append(errs, db.closeRaw(context.Background()))
	}
	db.closeWriterStmts()
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	return errors.Join(errs...)
}

// Ping checks that the file is readable and fully migrated. It returns an
// error of kind ErrUnavailable otherwise.
func (db *DB) Ping(ctx context.Context) error {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations`).Scan(&n); err != nil {
		return fmt.Errorf("ping sqlite: %w: %v", imprint.ErrUnavailable, err)
	}
	want, err := migrationNames()
	if err != nil {
		return err
	}
	if n < len(want) {
		return fmt.Errorf("ping sqlite: %w: %d of %d migrations applied", imprint.ErrUnavailable, n, len(want))
	}
	return nil
}

type migration struct {
	version int
	name    string
}

func migrationNames() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and _", name)
		}
		out = append(out, migration{version: v, name: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate applies each embedded migration not yet recorded, in order, each
// in its own transaction together with its record.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w: %v", imprint.ErrUnavailable, err)
	}
	ms, err := migrationNames()
	if err != nil {
		return err
	}
	for _, m := range ms {
		body, err := migrationFiles.ReadFile("migrations/" + m.name)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.name, err)
		}
		err = db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return nil, err
			}
			if n > 0 {
				return nil, nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return nil, err
			}
			if step := migrationSteps[m.version]; step != nil {
				if err := step(ctx, tx); err != nil {
					return nil, err
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, imprint.Now().String())
			return nil, err
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w: %v", m.name, imprint.ErrUnavailable, err)
		}
	}
	return nil
}

// writeTx runs fn in a write transaction and, after a successful commit,
// calls the function fn returned (used to update in-memory indexes).
func (db *DB) writeTx(ctx context.Context, fn func(tx *sql.Tx) (func(), error)) error {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	after, err := fn(tx)
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	db.committed(after)
	return nil
}

// committed runs what follows every write commit: the checkpointer's count
// and the transaction's after function (nil for none).
func (db *DB) committed(after func()) {
	if db.ckpt != nil {
		db.ckpt.committed()
	}
	if after != nil {
		after()
	}
}

// scopeArgs returns the values of the scope columns (tenant, user_id, agent).
func scopeArgs(s imprint.Scope) []any { return []any{s.Tenant, s.User, s.Agent} }

// scopeWhere is the scope filter for a table alias ("" for none).
func scopeWhere(alias string) string {
	if alias != "" {
		alias += "."
	}
	return alias + "tenant = ? AND " + alias + "user_id = ? AND " + alias + "agent = ?"
}

// workspaceWhere is the workspace filter on a table alias (" AND ..."),
// and its arguments: none for ws "" (every workspace), ws only, or ws and
// the workspace-less records with global (imprint.MemoryFilter).
func workspaceWhere(alias, ws string, global bool) (string, []any) {
	if ws == "" && !global {
		return "", nil
	}
	if alias != "" {
		alias += "."
	}
	if global {
		return " AND " + alias + "workspace IN (?, '')", []any{ws}
	}
	return " AND " + alias + "workspace = ?", []any{ws}
}

func validScope(s imprint.Scope) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return nil
}

// ts formats t for a TEXT column (” when zero).
func ts(t imprint.Time) string { return t.String() }

// parseTS reads a TEXT time column; ” and unparsable values are zero.
func parseTS(s string) imprint.Time {
	if s == "" {
		return imprint.Time{}
	}
	if t, err := time.Parse(imprint.TimeLayout, s); err == nil {
		return imprint.At(t)
	}
	t, _ := imprint.ParseTime(s)
	return t
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// placeholders returns "?, ?, ..." for n values.
func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// isUnique reports whether err is a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// dbErr wraps a driver or kind error with the operation's name.
func dbErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}
