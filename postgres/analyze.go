package postgres

import (
	"context"
	"sync"
	"time"
)

// A table no ANALYZE has seen yet (pg_class.reltuples < 0: a new
// database, until autovacuum's first pass a minute or more later, longer
// than most first imports) has no statistics, and the planner takes each
// scope column for selective: a lookup by key ties between the unique
// index and any other index on the scope's columns, and the plans it made
// read every row of the scope for each statement. At a hundred times the
// shipped testdata (4,600 sessions) the per-session updates, the pending
// reads and the episode reads of one import took 14 s of the server's
// time that way. So once this process's own writes have grown such a
// table past analyzeAfter rows, the store runs ANALYZE on its key columns
// (a few ms; the sample's other columns are not read), once per table, in
// the background; the server then plans the statements again with the
// statistics. Later growth is autovacuum's.

// analyzeAfter is, by table, how many rows this process writes before the
// table is analyzed when it never was; analyzeCols the columns its
// lookups filter on.
var (
	analyzeAfter = map[string]int{"sessions": 200, "episodes": 300, "messages": 5000, "traces": 3000, "memories": 2000}
	analyzeCols  = map[string]string{
		"sessions": "tenant, user_id, agent, id",
		"episodes": "tenant, user_id, agent, session_id, status, id",
		"messages": "tenant, user_id, agent, session_id, id",
		"traces":   "tenant, user_id, agent, episode_id, session_id, id",
		"memories": "tenant, user_id, agent, session_id, content_hash, id",
	}
)

// analyzeTimeout bounds one ANALYZE (a lock held by another session's
// VACUUM or ALTER TABLE must not hold a connection for long).
const analyzeTimeout = 30 * time.Second

// growth counts, by table, the rows this process wrote to it until the
// table is analyzed.
type growth struct {
	mu     sync.Mutex
	rows   map[string]int
	done   map[string]bool
	closed bool
	wg     sync.WaitGroup

	// ctx ends when the store closes.
	ctx    context.Context
	cancel context.CancelFunc
}

// grew notes n rows written to table by a committed transaction and, the
// first time the table's count passes analyzeAfter, analyzes it in the
// background when it never was. Not on PGlite, whose one connection the
// ANALYZE would take from the store's requests.
func (db *DB) grew(table string, n int) {
	after, ok := analyzeAfter[table]
	if !ok || n <= 0 || db.noCopy || db.growth.ctx == nil {
		return
	}
	g := &db.growth
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done[table] || g.closed {
		return
	}
	g.rows[table] += n
	if g.rows[table] < after {
		return
	}
	g.done[table] = true
	g.wg.Go(func() { db.analyzeNew(table) })
}

// analyzeNew analyzes table's key columns when no ANALYZE or VACUUM has
// seen it yet (another node may have). An error is left to autovacuum,
// which analyzes the table in its time.
func (db *DB) analyzeNew(table string) {
	ctx, cancel := context.WithTimeout(db.growth.ctx, analyzeTimeout)
	defer cancel()
	var never bool
	if err := db.pool.QueryRow(ctx, `SELECT COALESCE((SELECT reltuples < 0 FROM pg_class
		WHERE oid = to_regclass(quote_ident(current_schema()) || '.' || $1)), false)`, table).Scan(&never); err != nil || !never {
		return
	}
	_, _ = db.pool.Exec(ctx, `ANALYZE `+table+` (`+analyzeCols[table]+`)`)
}

// startGrowth readies the store's growth counts (Open).
func (db *DB) startGrowth() {
	db.growth.rows, db.growth.done = map[string]int{}, map[string]bool{}
	db.growth.ctx, db.growth.cancel = context.WithCancel(context.Background())
}

// stopGrowth ends the ANALYZE running and waits for it; no other starts
// (Close).
func (db *DB) stopGrowth() {
	g := &db.growth
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	if g.cancel != nil {
		g.cancel()
	}
	g.wg.Wait()
}
