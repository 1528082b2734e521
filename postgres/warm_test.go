package postgres

import (
	"context"
	"strings"
	"testing"
)

// TestWarmOpensWarmConnections checks that Warm leaves the pool's every
// connection open, each having planned a scan of every table of the
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
	if max := db.pool.Config().MaxConns; st.TotalConns() != max || st.IdleConns() != max {
		t.Fatalf("after Warm the pool holds %d connections (%d idle), want its %d open and idle", st.TotalConns(), st.IdleConns(), max)
	}
	opened := st.NewConnsCount()
	conns := make([]interface{ Release() }, 0, max(1, int(db.pool.Config().MaxConns)))
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
