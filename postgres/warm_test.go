package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/imprint-dev/imprint/internal/pgtest"
)

// TestWarmOpensWarmConnections checks that Warm leaves the pool's first
// connections (up to warmConns) open, each having planned a scan of every table of the
// store's schema, and the keyword ranks table read: the first requests of
// imprint serve then open no backend and read no catalog of their own.
func TestWarmOpensWarmConnections(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	plan, err := func() (string, error) {
		c, err := db.pool.Acquire(ctx)
		if err != nil {
			return "", err
		}
		defer c.Release()
		return tablesPlan(ctx, c.Conn())
	}()
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"messages", "episodes", "episode_turns", "memories", "traces", "sessions"} {
		if !strings.Contains(plan, `."`+table+`"`) {
			t.Errorf("the warm-up plan has no scan of %s: %s", table, plan)
		}
	}
	if err := db.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	st := db.pool.Stat()
	if want := min(db.pool.Config().MaxConns, warmConns); st.TotalConns() != want || st.IdleConns() != want {
		t.Fatalf("after Warm the pool holds %d connections (%d idle), want %d open and idle", st.TotalConns(), st.IdleConns(), want)
	}
	opened := st.NewConnsCount()
	conns := make([]interface{ Release() }, 0, st.TotalConns())
	for range cap(conns) {
		c, err := db.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
	if n := db.pool.Stat().NewConnsCount() - opened; n != 0 {
		t.Errorf("using every connection after Warm opened %d new ones", n)
	}
	db.occ.mu.Lock()
	ranks := db.occ.ranks
	db.occ.mu.Unlock()
	if len(ranks) != maxPositions+1 {
		t.Errorf("after Warm the keyword ranks table holds %d ranks, want %d", len(ranks), maxPositions+1)
	}
}

// TestJobPoolNamed checks that River's pool is told apart from the store's
// in pg_stat_activity (application_name imprint-jobs), and plans
// generically.
func TestJobPoolNamed(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	pool, err := db.JobPool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var name, mode string
	if err := pool.QueryRow(ctx, `SELECT current_setting('application_name'), current_setting('plan_cache_mode')`).Scan(&name, &mode); err != nil {
		t.Fatal(err)
	}
	if name != "imprint-jobs" || mode != "force_generic_plan" {
		t.Errorf("River's pool connections: application_name %q, plan_cache_mode %q; want imprint-jobs, force_generic_plan", name, mode)
	}
}

// TestWarmLeavesConnectionsForOthers checks what Warm holds on a server
// shared with other nodes and applications: a pool_max_conns of 50 is a
// ceiling, so Warm opens warmConns connections, not 50 (opening them all
// would take the server's connections from the other nodes); and it plans
// only imprint's and River's tables, so another application's table in
// the same schema, locked by its own ALTER TABLE, neither appears in the
// plan nor keeps Warm waiting.
func TestWarmLeavesConnectionsForOthers(t *testing.T) {
	u := pgtest.Schema(t)
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	db, err := Open(t.Context(), u+sep+"pool_max_conns=50")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if got := db.pool.Config().MaxConns; got != 50 {
		t.Fatalf("pool_max_conns=50 gave a pool of %d", got)
	}
	other, err := pgx.ConnectConfig(t.Context(), cfg.ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	if _, err := other.Exec(t.Context(), `CREATE TABLE app_orders (id int)`); err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), `LOCK TABLE app_orders IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), warmTimeout/2)
	defer cancel()
	if err := db.Warm(ctx); err != nil {
		t.Fatalf("Warm with another application's table locked: %v", err)
	}
	if n := db.pool.Stat().TotalConns(); n != warmConns {
		t.Errorf("Warm of a pool of at most 50 opened %d connections, want %d", n, warmConns)
	}
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	plan, err := tablesPlan(ctx, c.Conn())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plan, "app_orders") || !strings.Contains(plan, `."memories"`) {
		t.Errorf("warm-up plan %s: want imprint's tables and not app_orders", plan)
	}
}
