package postgres

import (
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A new database gets its whole schema from schema.sql, the schema the
// migrations up to the one it names make, with the columns, options and
// tables the later ones add written into the tables as they are created:
// one file run as 0001's halves are (below), then the migrations after the
// one it names. A schema whose migration was cut off with 0001's halves in
// place (initMark) goes on with 0001 and the migrations after it.
//
// The first migration (schema.sql, or 0001_init.sql after its own cut-off
// halves: the whole schema) creates ~60 relations, each its own files,
// catalog rows and, for a btree, an fsync; a new backend reads the
// catalogs it needs cold. It is split in two
// halves run at once on two connections, so that a database's first
// import waits for the slower half rather than both:
//
//   - the migrating transaction (which holds the migration lock) creates
//     the text search configuration, the extension and the session,
//     message, episode and trace tables;
//   - a second transaction creates the memory, LLM call, job and API key
//     tables (and, in schema.sql, the node leases and the load mark), then
//     marks them done (the file's mark, a comment on the memories table)
//     and commits once the first half has succeeded;
//   - the first then creates what needs the extension on the second
//     half's tables (the trigram index of memories), clears the mark,
//     applies the other migrations, records them and commits.
//
// When the second half cannot run beside (no second connection, a lock,
// halfTimeout) the first transaction runs it itself. When the first
// fails after the second committed (a later migration's error), the
// second half is dropped again (undoSecondHalf). A crash between the two
// commits leaves the second half, marked, and no migration recorded: the
// next migration finds the mark and creates only the first half. A
// memories table without the mark (another application's) fails the
// migration as it always did.

// initMark is the comment on the memories table of a schema whose second
// half of 0001 is in place and whose migration is not recorded yet;
// schemaMark (with schema.sql's last migration) that of schema.sql.
const (
	initMark   = "imprint: 0001_init.sql, second half"
	schemaMark = "imprint: schema.sql up to %s, second half"
)

// markPrefix starts every mark of a second half, of this version of imprint
// or another.
const markPrefix = "imprint: "

//go:embed schema.sql
var newSchema string

// schemaFirstLine is schema.sql's first line, naming the last migration
// the file holds.
var schemaFirstLine = regexp.MustCompile(`^-- imprint schema up to ((\d+)_[a-z0-9_]+\.sql)`)

// firstMigration is how a schema without a recorded migration is created:
// body (0001 or schema.sql), split at its halves with mark, and the
// migrations it stands for (those up to upTo).
type firstMigration struct {
	name string
	body string
	mark string
	upTo int
}

// schemaInit is schema.sql as a first migration.
func schemaInit() (firstMigration, error) {
	m := schemaFirstLine.FindStringSubmatch(newSchema)
	if m == nil {
		return firstMigration{}, fmt.Errorf("schema.sql: the first line does not name the last migration it holds")
	}
	v, err := strconv.Atoi(m[2])
	if err != nil {
		return firstMigration{}, fmt.Errorf("schema.sql: %w", err)
	}
	return firstMigration{name: "schema.sql", body: newSchema, mark: fmt.Sprintf(schemaMark, m[1]), upTo: v}, nil
}

// chainInit is 0001 as the first migration.
func chainInit() (firstMigration, error) {
	b, err := migrationFiles.ReadFile("migrations/0001_init.sql")
	if err != nil {
		return firstMigration{}, err
	}
	return firstMigration{name: "0001_init.sql", body: string(b), mark: initMark, upTo: 1}, nil
}

// firstFor returns the first migration that goes on from mark, the comment
// on the schema's memories table ("" for none): 0001 after its own cut-off
// halves, else schema.sql. A mark of another version of imprint is an
// error: its half is not this version's.
func firstFor(mark string) (firstMigration, error) {
	chain, err := chainInit()
	if err != nil {
		return firstMigration{}, err
	}
	if mark == chain.mark {
		return chain, nil
	}
	sch, err := schemaInit()
	if err != nil {
		return firstMigration{}, err
	}
	if strings.HasPrefix(mark, markPrefix) && mark != sch.mark {
		return firstMigration{}, fmt.Errorf("the schema's first migration, by another version of imprint, was cut off (memories is marked %q): open it with that version, or drop its tables", mark)
	}
	return sch, nil
}

// halfTimeout bounds the second half's transaction (connecting included):
// past it, the first transaction runs the second half itself. Its lock
// timeout is halfLockTimeout: the server cannot see a wait of the second
// half on a lock of the first, whose client is waiting for the second.
const (
	halfTimeout     = 10 * time.Second
	halfLockTimeout = "2s"
)

// initParts is a first migration's text split into its halves, the second
// ending with mark, and what the first runs after the second: ok is false
// when the text is not the one expected (the whole file then runs at once).
func initParts(body, mark string) (first, second, after string, ok bool) {
	const start, trigram = "\nCREATE TABLE memories (", "\nCREATE INDEX memories_cjk ON"
	i := strings.Index(body, start)
	if i < 0 {
		return "", "", "", false
	}
	first, second = body[:i+1], body[i+1:]
	j := strings.Index(second, trigram)
	if j < 0 {
		return "", "", "", false
	}
	k := strings.Index(second[j:], ";\n")
	if k < 0 {
		return "", "", "", false
	}
	after = second[j+1 : j+k+2]
	second = second[:j+1] + second[j+k+2:] + "\nCOMMENT ON TABLE memories IS '" + mark + "';\n"
	return first, second, after, true
}

// initUnmark is what the first half runs last: the mark is only for a
// migration cut off between the commits.
const initUnmark = "COMMENT ON TABLE memories IS NULL;\n"

// initMarkOf returns the comment on the memories table of the schema the
// tables are created in (not one later in the search path): a mark when a
// migration was cut off between the halves' commits, "" when there is no
// such table or comment.
func initMarkOf(ctx context.Context, tx pgx.Tx) (string, error) {
	var mark string
	err := tx.QueryRow(ctx, `SELECT COALESCE(obj_description(to_regclass(quote_ident(current_schema()) || '.memories'),
		'pg_class'), '')`).Scan(&mark)
	return mark, err
}

// applyInit applies the first migration fm in tx, whose connection holds
// the migration lock: its two halves at once when parallel (a pool of more
// than one connection on a server with more than one backend), else one
// after the other in tx; the first alone when done (a crash left the
// second, marked). It reports whether the second half committed on its
// own (the caller undoes it when tx does not commit).
func (db *DB) applyInit(ctx context.Context, tx pgx.Tx, fm firstMigration, done, parallel bool) (bool, error) {
	first, second, after, ok := initParts(fm.body, fm.mark)
	if !ok {
		_, err := tx.Exec(ctx, fm.body)
		return false, err
	}
	var committed bool
	var err error
	switch {
	case done:
		// A crash left the second half: the first alone.
		if _, err := tx.Exec(ctx, first); err != nil {
			return false, err
		}
	case parallel:
		if committed, err = db.applyHalves(ctx, tx, first, second); err != nil {
			return committed, err
		}
		if !committed {
			if _, err := tx.Exec(ctx, second); err != nil {
				return false, err
			}
		}
	default:
		if _, err := tx.Exec(ctx, first+second); err != nil {
			return false, err
		}
	}
	_, err = tx.Exec(ctx, after+initUnmark)
	return committed, err
}

// applyHalves runs first in tx and second in a transaction of another
// connection at the same time, and commits the second when both
// succeeded. It reports whether the second committed; when it did not
// but first succeeded (no second connection, its error, halfTimeout),
// the caller runs second in tx.
func (db *DB) applyHalves(ctx context.Context, tx pgx.Tx, first, second string) (bool, error) {
	hctx, cancel := context.WithTimeout(ctx, halfTimeout)
	defer cancel()
	ran := make(chan error, 1)
	commit := make(chan bool, 1)
	committed := make(chan error, 1)
	// The second connection opens while the first half runs.
	go func() {
		c, err := db.pool.Acquire(hctx)
		if err != nil {
			ran <- err
			committed <- err
			return
		}
		defer c.Release()
		other, err := c.Begin(hctx)
		if err == nil {
			if _, err = other.Exec(hctx, "SET LOCAL lock_timeout = '"+halfLockTimeout+"';\n"+second); err != nil {
				_ = other.Rollback(context.WithoutCancel(hctx))
			}
		}
		ran <- err
		if err != nil {
			committed <- err
			return
		}
		if !<-commit {
			committed <- other.Rollback(context.WithoutCancel(hctx))
			return
		}
		// A cancel must not leave it unknown whether the commit happened.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(hctx), halfTimeout)
		defer cancel()
		committed <- other.Commit(cctx)
	}()
	_, ferr := tx.Exec(ctx, first)
	serr := <-ran
	commit <- ferr == nil && serr == nil
	cerr := <-committed
	return ferr == nil && serr == nil && cerr == nil, ferr
}

// secondTables are the tables of a first migration's second half.
func secondTables(second string) []string {
	var out []string
	for _, g := range createTable.FindAllStringSubmatch(second, -1) {
		out = append(out, strings.ToLower(g[1]))
	}
	return out
}

// undoSecondHalf drops fm's second half after the migration that
// committed it failed: under the migration lock, when no migration is
// recorded and its mark is there (another node may have completed the
// migration since, or taken the marked half for its own).
func (db *DB) undoSecondHalf(ctx context.Context, fm firstMigration) error {
	_, second, _, ok := initParts(fm.body, fm.mark)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), halfTimeout)
	defer cancel()
	return db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		mark, err := initMarkOf(ctx, tx)
		if err != nil {
			return err
		}
		marked := mark == fm.mark
		var recorded bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass(quote_ident(current_schema()) || '.imprint_migrations') IS NOT NULL`).
			Scan(&recorded); err != nil {
			return err
		}
		if recorded {
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM imprint_migrations)`).Scan(&recorded); err != nil {
				return err
			}
		}
		if !marked || recorded {
			return nil
		}
		_, err = tx.Exec(ctx, `DROP TABLE `+strings.Join(secondTables(second), ", "))
		return err
	})
}
