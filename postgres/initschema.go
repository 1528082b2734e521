package postgres

import (
	"context"
	"strings"

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
//     half's tables (the trigram index of memories), records the
//     migration and commits.
//
// A crash between the two commits leaves the second half, marked, and no
// migration recorded: the next migration finds the mark and creates only
// the first half. A memories table without the mark (another
// application's) fails the migration as it always did.

// initMark is the comment on the memories table of a schema whose second
// half of 0001 is in place.
const initMark = "imprint: 0001_init.sql, second half"

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

// applyInit applies 0001 (body) in tx, whose connection holds the
// migration lock: its two halves at once when parallel (a pool of more
// than one connection on a server with more than one backend), else one
// after the other in tx.
func (db *DB) applyInit(ctx context.Context, tx pgx.Tx, body string, parallel bool) error {
	first, second, after, ok := initParts(body)
	if !ok {
		_, err := tx.Exec(ctx, body)
		return err
	}
	var done bool
	// In the schema the tables are created in, not one later in the
	// search path.
	if err := tx.QueryRow(ctx, `SELECT COALESCE(obj_description(to_regclass(quote_ident(current_schema()) || '.memories'),
		'pg_class') = $1, false)`, initMark).Scan(&done); err != nil {
		return err
	}
	switch {
	case done:
		// A crash left the second half: the first alone.
	case !parallel:
		if _, err := tx.Exec(ctx, first+second); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, after)
		return err
	default:
		if err := db.applyHalves(ctx, tx, first, second); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, after)
		return err
	}
	if _, err := tx.Exec(ctx, first); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, after)
	return err
}

// applyHalves runs first in tx and second in a transaction of another
// connection at the same time, and commits the second when both
// succeeded.
func (db *DB) applyHalves(ctx context.Context, tx pgx.Tx, first, second string) error {
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	ran := make(chan error, 1)
	commit := make(chan bool, 1)
	committed := make(chan error, 1)
	go func() {
		other, err := c.Begin(ctx)
		if err == nil {
			if _, err = other.Exec(ctx, second); err != nil {
				_ = other.Rollback(context.WithoutCancel(ctx))
			}
		}
		ran <- err
		if err != nil {
			committed <- err
			return
		}
		if !<-commit {
			committed <- other.Rollback(context.WithoutCancel(ctx))
			return
		}
		committed <- other.Commit(ctx)
	}()
	_, ferr := tx.Exec(ctx, first)
	serr := <-ran
	commit <- ferr == nil && serr == nil
	cerr := <-committed
	switch {
	case ferr != nil:
		return ferr
	case serr != nil:
		return serr
	}
	return cerr
}
