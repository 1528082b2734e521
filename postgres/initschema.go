package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The first migration (0001_init.sql, the whole schema) creates ~60
// relations, each its own files, catalog rows and, for a btree, an fsync;
// a new backend reads the catalogs it needs cold. It is split in two
// halves run at once on two connections, so that a database's first
// import waits for the slower half rather than both:
//
//   - the migrating transaction (which holds the migration lock) creates
//     the text search configuration, the extension and the session,
//     message, episode and trace tables;
//   - a second transaction creates the memory, LLM call, job and API key
//     tables, then marks them done (initMark, a comment on the memories
//     table) and commits once the first half has succeeded;
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
// half of 0001 is in place and whose migration is not recorded yet.
const initMark = "imprint: 0001_init.sql, second half"

// halfTimeout bounds the second half's transaction (connecting included):
// past it, the first transaction runs the second half itself. Its lock
// timeout is halfLockTimeout: the server cannot see a wait of the second
// half on a lock of the first, whose client is waiting for the second.
const (
	halfTimeout     = 10 * time.Second
	halfLockTimeout = "2s"
)

// initParts is 0001's text split into its halves and what the first runs
// after the second: ok is false when the text is not the one expected (the
// whole file then runs at once).
func initParts(body string) (first, second, after string, ok bool) {
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
	second = second[:j+1] + second[j+k+2:] + "\nCOMMENT ON TABLE memories IS '" + initMark + "';\n"
	return first, second, after, true
}

// initUnmark is what the first half runs last: the mark is only for a
// migration cut off between the commits.
const initUnmark = "COMMENT ON TABLE memories IS NULL;\n"

// initMarked reports whether the memories table of the schema the tables
// are created in (not one later in the search path) carries initMark.
func initMarked(ctx context.Context, tx pgx.Tx) (bool, error) {
	var marked bool
	err := tx.QueryRow(ctx, `SELECT COALESCE(obj_description(to_regclass(quote_ident(current_schema()) || '.memories'),
		'pg_class') = $1, false)`, initMark).Scan(&marked)
	return marked, err
}

// applyInit applies 0001 (body) in tx, whose connection holds the
// migration lock: its two halves at once when parallel (a pool of more
// than one connection on a server with more than one backend), else one
// after the other in tx. It reports whether the second half committed on
// its own (the caller undoes it when tx does not commit).
func (db *DB) applyInit(ctx context.Context, tx pgx.Tx, body string, parallel bool) (bool, error) {
	first, second, after, ok := initParts(body)
	if !ok {
		_, err := tx.Exec(ctx, body)
		return false, err
	}
	done, err := initMarked(ctx, tx)
	if err != nil {
		return false, err
	}
	var committed bool
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

// secondTables are the tables of 0001's second half.
func secondTables(second string) []string {
	var out []string
	for _, g := range createTable.FindAllStringSubmatch(second, -1) {
		out = append(out, strings.ToLower(g[1]))
	}
	return out
}

// undoSecondHalf drops 0001's second half after the migration that
// committed it failed: under the migration lock, when no migration is
// recorded and the mark is there (another node may have completed the
// migration since, or taken the marked half for its own).
func (db *DB) undoSecondHalf(ctx context.Context) error {
	b, err := migrationFiles.ReadFile("migrations/0001_init.sql")
	if err != nil {
		return err
	}
	_, second, _, ok := initParts(string(b))
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), halfTimeout)
	defer cancel()
	return db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		marked, err := initMarked(ctx, tx)
		if err != nil {
			return err
		}
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
