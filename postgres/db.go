package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	imprint "github.com/imprint-dev/imprint"
)

var (
	_ imprint.Store        = (*DB)(nil)
	_ imprint.ServiceStore = (*DB)(nil)
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DB is an imprint.Store on one PostgreSQL database. It is safe for
// concurrent use, and several processes may use one database at once.
type DB struct {
	url  string
	pool *pgxpool.Pool

	// vec is the vector tier (pgvector.go).
	vec vecTier

	// bigTables records, by table name, whether its last keyword search
	// found it large (search.go).
	bigTables sync.Map
	// bm25Totals caches, by table, the totals of a large table's keyword
	// indexes (bm25.go).
	bm25Totals sync.Map
	// termLimits, when set (by tests), replaces the keyword search's
	// record counts of a large table and a common term (prune.go).
	termLimits termLimits
	// occ keeps, by ts_rank, the number of positions of one lexeme
	// (prune.go, occurrences).
	occ struct {
		mu    sync.Mutex
		ranks map[float32]int
	}

	// lexemes caches the tsvectors of the words written (tsvector.go).
	lexemes lexemeCache

	// noCopy records the messages of sessions with none stored with
	// INSERTs too, instead of a COPY (copy.go): on PGlite, whose socket
	// drops the connection at COPY … FROM STDIN, and in tests.
	noCopy bool

	// jobEngine, when set, takes the store's jobs (jobhook.go).
	jobEngine engineSlot

	// growth counts the rows written to tables no ANALYZE has seen
	// (analyze.go).
	growth growth

	closeOnce sync.Once
	// onClose, when set (by tests), runs once the pool is closed.
	onClose func()
}

// IsURL reports whether s names a PostgreSQL database (postgres:// or
// postgresql://), as the store setting and IMPRINT_STORE do.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database at url (postgres://user@host:port/db?…; a
// search_path parameter picks the schema) and applies the embedded
// migrations that have not run yet, under an advisory lock so that nodes
// starting together migrate once. ErrInvalid for a URL that does not
// parse, ErrUnavailable when the database cannot be reached or migrated.
func Open(ctx context.Context, url string) (*DB, error) {
	if strings.TrimSpace(url) == "" {
		return nil, imprint.Invalidf("postgres url is required")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, imprint.Invalidf("postgres url: %v", redactErr(err, url))
	}
	sp, setPath := cfg.ConnConfig.RuntimeParams["search_path"]
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		registerFloat4Array(c.TypeMap())
		if !setPath {
			return nil
		}
		// Set again on each connection: a server whose connections share
		// one backend (PGlite's socket) ignores startup settings.
		_, err := c.Exec(ctx, `SELECT set_config('search_path', $1, false)`, sp)
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w: %v", imprint.ErrUnavailable, redactErr(err, url))
	}
	db := &DB{url: url, pool: pool}
	var version string
	if err := pool.QueryRow(ctx, `SELECT version()`).Scan(&version); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w: %v", imprint.ErrUnavailable, redactErr(err, url))
	}
	db.noCopy = strings.Contains(version, "PGlite")
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if db.lexemes.porter, err = porterDictionary(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: keyword dictionary: %w: %v", imprint.ErrUnavailable, err)
	}
	if err := db.detectVector(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: vectors: %w: %v", imprint.ErrUnavailable, err)
	}
	db.startGrowth()
	return db, nil
}

// redactErr is err's text without the URL's password.
func redactErr(err error, url string) string {
	msg := err.Error()
	if cfg, perr := pgconn.ParseConfig(url); perr == nil && cfg.Password != "" {
		msg = strings.ReplaceAll(msg, cfg.Password, "xxxxx")
	}
	return msg
}

// CanListen reports whether the pool may hold a connection for LISTEN (a
// job engine's notifications): not when it has a single connection (as
// on PGlite, one backend), which must then poll.
func (db *DB) CanListen() bool { return db.pool.Config().MaxConns > 1 }

// Pool returns the store's connection pool, for a job engine (River) that
// must work in the same database. Do not close it; Close does.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close closes the connection pool; closing again does nothing.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.stopGrowth()
		db.pool.Close()
		if db.onClose != nil {
			db.onClose()
		}
	})
	return nil
}

// Ping checks that the database is reachable and fully migrated. It
// returns an error of kind ErrUnavailable otherwise.
func (db *DB) Ping(ctx context.Context) error {
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM imprint_migrations`).Scan(&n); err != nil {
		return fmt.Errorf("ping postgres: %w: %v", imprint.ErrUnavailable, err)
	}
	want, err := migrationNames()
	if err != nil {
		return err
	}
	if n < len(want) {
		return fmt.Errorf("ping postgres: %w: %d of %d migrations applied", imprint.ErrUnavailable, n, len(want))
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

// migrationLock is the advisory lock key nodes migrate under.
const migrationLock = 0x696d7072696e74 // "imprint"

// migrate applies each embedded migration not yet recorded, in order, in
// one transaction holding the migration lock. A schema without a recorded
// migration is created from schema.sql (initschema.go), which stands for
// the migrations up to the one it names.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrationNames()
	if err != nil {
		return err
	}
	// The first migration, when one ran, and whether its second half
	// committed apart (initschema.go).
	var fm firstMigration
	var secondCommitted bool
	err = db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS imprint_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`); err != nil {
			return err
		}
		// The versions applied, in one query.
		rows, err := tx.Query(ctx, `SELECT version FROM imprint_migrations`)
		if err != nil {
			return err
		}
		applied, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return err
		}
		if len(applied) == 0 {
			mark, err := initMarkOf(ctx, tx)
			if err != nil {
				return err
			}
			if fm, err = firstFor(mark); err != nil {
				return err
			}
			// PGlite's connections share its one backend.
			parallel := db.pool.Config().MaxConns > 1 && !db.noCopy
			secondCommitted, err = db.applyInit(ctx, tx, fm, mark == fm.mark, parallel)
			if err != nil {
				return fmt.Errorf("%s: %w", fm.name, err)
			}
			var versions []int32
			var names []string
			for _, m := range ms {
				if m.version <= fm.upTo {
					versions, names = append(versions, int32(m.version)), append(names, m.name)
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO imprint_migrations (version, name, applied_at)
				SELECT v, n, now() FROM unnest($1::integer[], $2::text[]) AS m(v, n)`, versions, names); err != nil {
				return err
			}
			applied = versions
		}
		for _, m := range ms {
			if slices.Contains(applied, int32(m.version)) {
				continue
			}
			body, err := migrationFiles.ReadFile("migrations/" + m.name)
			if err != nil {
				return err
			}
			if _, err = tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO imprint_migrations (version, name, applied_at) VALUES ($1, $2, now())`,
				m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if secondCommitted {
			if uerr := db.undoSecondHalf(ctx, fm); uerr != nil {
				err = fmt.Errorf("%w (and dropping the tables it had created: %v)", err, uerr)
			}
		}
		return fmt.Errorf("migrate: %w: %v", imprint.ErrUnavailable, err)
	}
	return nil
}

// tx runs fn in a transaction, committing when it returns nil.
func (db *DB) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.pool, fn)
}

// scopeArgs returns the values of the scope columns (tenant, user_id, agent).
func scopeArgs(s imprint.Scope) []any { return []any{s.Tenant, s.User, s.Agent} }

// args collects query arguments and names their placeholders.
type args []any

// add appends v and returns its placeholder ($n).
func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// scope appends the scope's values and returns the condition on the
// scope columns of alias ("" for none).
func (a *args) scope(alias string, s imprint.Scope) string {
	if alias != "" {
		alias += "."
	}
	return alias + "tenant = " + a.add(s.Tenant) + " AND " + alias + "user_id = " + a.add(s.User) +
		" AND " + alias + "agent = " + a.add(s.Agent)
}

// workspace is the workspace filter on a table alias (" AND ..."): none
// for ws "" (every workspace), ws only, or ws and the workspace-less
// records with global.
func (a *args) workspace(alias, ws string, global bool) string {
	if ws == "" && !global {
		return ""
	}
	if alias != "" {
		alias += "."
	}
	if global {
		return " AND " + alias + "workspace IN (" + a.add(ws) + ", '')"
	}
	return " AND " + alias + "workspace = " + a.add(ws)
}

func itoa(n int) string { return strconv.Itoa(n) }

// maxRowsPerInsert bounds the rows of one multi-row INSERT: at most this
// many distinct statements per kind of row are prepared and cached.
const maxRowsPerInsert = 64

// valuesRows returns the VALUES list of rows rows of row, a parenthesized
// row whose "?" are its own placeholders, numbered from first+1 on (the
// statement's shared placeholders, $1 to $first, may appear as they are).
func valuesRows(row string, first, rows int) string {
	var b strings.Builder
	n := first
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		for i := 0; i < len(row); i++ {
			if row[i] != '?' {
				b.WriteByte(row[i])
				continue
			}
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		}
	}
	return b.String()
}

func validScope(s imprint.Scope) error { return s.Validate() }

// tsArg is t for a timestamptz column: NULL when zero.
func tsArg(t imprint.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Time
}

// tsOf reads a nullable timestamptz column.
func tsOf(t *time.Time) imprint.Time {
	if t == nil {
		return imprint.Time{}
	}
	return imprint.At(*t)
}

// isUnique reports whether err is a unique-constraint violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// dbErr wraps a driver or kind error with the operation's name.
func dbErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}

// nullable is s, or NULL when empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// vecArg is v for a float4[] column: NULL when empty.
func vecArg(v []float32) any {
	if len(v) == 0 {
		return nil
	}
	return v
}
