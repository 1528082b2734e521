package postgres

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestRareWordAfterPurgeRanksFirst: a word 250 memories of another
// scope held is rare once they are purged (hard-deleted, not retired), as
// SQLite's FTS5 counts it: one live memory holds it. The planner's
// statistics are from before the purge (249 deleted rows of 3,000 are
// below autovacuum's ANALYZE threshold of 50 + 10 %), so the estimate still
// says 250. checkCommon counts its live records (1 < countCap): it is
// rare. A shortcut trusting the estimate while no memory is retired
// (7e02cb3, reverted) called it common: its idf was then the estimate's
// and its one live memory ranked below memories of a word twenty times as
// frequent.
func TestRareWordAfterPurgeRanksFirst(t *testing.T) {
	db := openTemp(t)
	db.termLimits = termLimits{exactBelow: 1000, common: 100}
	ctx := t.Context()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	other := imprint.Scope{Tenant: "t2", User: "u", Agent: "a"}
	const rows, zebras, alphas = 3000, 250, 20
	var puts []imprint.MemoryPut
	var purge []string
	for i := range rows {
		m := imprint.Memory{ID: fmt.Sprintf("m%05d", i), Scope: scope, Content: fmt.Sprintf("the favourite colour is blue note %d", i),
			Type: imprint.MemoryEpisodic}
		switch {
		case i == 0:
			m.Content = "the favourite animal is zebra note 0"
		case i < zebras:
			m.Scope, m.Content = other, fmt.Sprintf("the favourite animal is zebra note %d", i)
			purge = append(purge, m.ID)
		case i < zebras+alphas:
			m.Content = fmt.Sprintf("the favourite letter is alpha note %d", i)
		}
		puts = append(puts, imprint.MemoryPut{Memory: m})
	}
	if err := db.PutMemories(ctx, puts); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE memories`); err != nil {
		t.Fatal(err)
	}
	// The other tenant's zebra memories are purged.
	got, err := db.PurgeMemories(ctx, other, purge)
	if err != nil || len(got) != len(purge) {
		t.Fatalf("purged %d of %d: %v", len(got), len(purge), err)
	}
	src := hitSources[imprint.KindMemory]
	tqs, est, err := db.termPlan(ctx, src, "words", []string{"zebra"}, true)
	if err != nil {
		t.Fatal(err)
	}
	common := []bool{false}
	if err := db.checkCommon(ctx, src, "words", tqs, est, 101, common); err != nil {
		t.Fatal(err)
	}
	if common[0] {
		t.Errorf("zebra, held by 1 live memory (estimated at %d from statistics older than a purge), is called common; want rare", est[0])
	}
	hits, err := db.SearchText(ctx, imprint.TextQuery{Scope: scope, Kind: imprint.KindMemory, Text: "zebra alpha", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	if len(ids) == 0 || ids[0] != "m00000" {
		t.Errorf("search %q: hits %v; want m00000, the only memory holding zebra (1 live record against alpha's 20), first", "zebra alpha", ids)
	}
}

// TestConcurrentCopyAppends: two stores (two nodes) append the same
// messages to the same new sessions at once, in batches of several
// sessions (the COPY path when all are empty). Every id must be stored
// once and every call must succeed, as with INSERT … ON CONFLICT.
func TestConcurrentCopyAppends(t *testing.T) {
	ctx := t.Context()
	a := openTemp(t)
	b, err := Open(ctx, a.url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	const rounds, sessions, msgs = 30, 4, 20
	batches := func(r int) []imprint.MessageBatch {
		var out []imprint.MessageBatch
		for s := range sessions {
			bt := imprint.MessageBatch{Scope: scope, SessionID: fmt.Sprintf("r%d-s%d", r, s)}
			for i := range msgs {
				bt.Messages = append(bt.Messages, imprint.Message{ID: fmt.Sprintf("m%d", i), Role: imprint.RoleUser,
					Content: fmt.Sprintf("hello %d zebra", i)})
			}
			out = append(out, bt)
		}
		return out
	}
	errs := make(chan error, 2*rounds)
	var wg sync.WaitGroup
	for _, db := range []*DB{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				// Half the rounds in reverse session order.
				bs := batches(r)
				if db == b && r%2 == 0 {
					slices.Reverse(bs)
				}
				if _, err := db.AppendMessageBatches(ctx, bs); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM messages`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != rounds*sessions*msgs {
		t.Errorf("%d messages stored, want %d", n, rounds*sessions*msgs)
	}
}

// TestCopyTracesTakenID: a new capture whose trace id another
// episode holds is a conflict, with nothing of the call written, on the
// COPY path as on the INSERTs'; and two stores saving the same new
// captures at once both succeed, each trace stored once.
func TestCopyTracesTakenID(t *testing.T) {
	ctx := t.Context()
	db := openTemp(t)
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	ep := func(id string) imprint.Episode {
		return imprint.Episode{ID: id, SessionID: "s", Scope: scope, Status: imprint.EpisodeFinalized}
	}
	tr := func(id, key string) imprint.Trace {
		return imprint.Trace{ID: id, StepKey: key, UserText: "hello " + id}
	}
	if err := db.SaveCaptures(ctx, []imprint.Episode{ep("e1")}, [][]imprint.Trace{{tr("x", "0")}}); err != nil {
		t.Fatal(err)
	}
	err := db.SaveCaptures(ctx, []imprint.Episode{ep("e2"), ep("e3")}, [][]imprint.Trace{{tr("y", "0")}, {tr("x", "0")}})
	if !errors.Is(err, imprint.ErrConflict) {
		t.Errorf("a new capture taking trace id x: %v, want ErrConflict", err)
	}
	for _, id := range []string{"e2", "e3"} {
		if _, err := db.GetEpisode(ctx, scope, id); !errors.Is(err, imprint.ErrNotFound) {
			t.Errorf("episode %s after the conflict: %v, want not found", id, err)
		}
	}
	b, err := Open(ctx, db.url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for _, st := range []*DB{db, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 20 {
				var eps []imprint.Episode
				var trs [][]imprint.Trace
				for c := range 3 {
					id := fmt.Sprintf("r%d-c%d", r, c)
					eps = append(eps, ep(id))
					trs = append(trs, []imprint.Trace{tr(id+"-0", "0"), tr(id+"-1", "1")})
				}
				if err := st.SaveCaptures(ctx, eps, trs); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM traces WHERE episode_id LIKE 'r%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 20*3*2 {
		t.Errorf("%d traces, want %d", n, 20*3*2)
	}
}

// TestRareWordAfterRewriteCountedRare: as
// TestRareWordAfterPurgeRanksFirst, with the zebra memories
// rewritten in place (PutMemory of their ids with new content: live,
// neither superseded nor forgotten) instead of purged.
func TestRareWordAfterRewriteCountedRare(t *testing.T) {
	db := openTemp(t)
	db.termLimits = termLimits{exactBelow: 1000, common: 100}
	ctx := t.Context()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	const rows, zebras = 3000, 250
	mem := func(i int, text string) imprint.MemoryPut {
		return imprint.MemoryPut{Memory: imprint.Memory{ID: fmt.Sprintf("m%05d", i), Scope: scope, Content: text, Type: imprint.MemoryEpisodic}}
	}
	var puts, rewrites []imprint.MemoryPut
	for i := range rows {
		text := fmt.Sprintf("the favourite colour is blue note %d", i)
		if i < zebras {
			text = fmt.Sprintf("the favourite animal is zebra note %d", i)
			if i > 0 {
				rewrites = append(rewrites, mem(i, fmt.Sprintf("the favourite animal is a cat note %d", i)))
			}
		}
		puts = append(puts, mem(i, text))
	}
	if err := db.PutMemories(ctx, puts); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE memories`); err != nil {
		t.Fatal(err)
	}
	if err := db.PutMemories(ctx, rewrites); err != nil {
		t.Fatal(err)
	}
	src := hitSources[imprint.KindMemory]
	tqs, est, err := db.termPlan(ctx, src, "words", []string{"zebra"}, true)
	if err != nil {
		t.Fatal(err)
	}
	common := []bool{false}
	if err := db.checkCommon(ctx, src, "words", tqs, est, 101, common); err != nil {
		t.Fatal(err)
	}
	if common[0] {
		t.Errorf("zebra, held by 1 live memory (estimated at %d from statistics older than 249 rewrites), is called common; want rare", est[0])
	}
}

// TestRarePhraseOfCommonWordsCountedRare: a query word the server
// parses into a phrase (snake_case: user_id is 'user' <-> 'id') is
// estimated by the planner as if its lexemes were independent and
// adjacency did not matter (tsquery selectivity: s(user)·s(id)). Here
// every memory holds user and id but one memory holds user_id: the
// estimate is the whole table and no memory is retired. checkCommon
// counts its live records (1): it is rare. The reverted shortcut of
// 7e02cb3 called it common without counting, and the one memory holding
// it ranked below memories of a word twenty times as frequent.
func TestRarePhraseOfCommonWordsCountedRare(t *testing.T) {
	db := openTemp(t)
	db.termLimits = termLimits{exactBelow: 1000, common: 100}
	ctx := t.Context()
	scope := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	var puts []imprint.MemoryPut
	for i := range 3000 {
		text := fmt.Sprintf("the user has the id %d", i)
		switch {
		case i == 0:
			text = "the user_id column is a uuid"
		case i <= 20:
			text = fmt.Sprintf("the user has the id %d alpha", i)
		}
		puts = append(puts, imprint.MemoryPut{Memory: imprint.Memory{ID: fmt.Sprintf("m%05d", i), Scope: scope, Content: text,
			Type: imprint.MemoryEpisodic}})
	}
	if err := db.PutMemories(ctx, puts); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE memories`); err != nil {
		t.Fatal(err)
	}
	src := hitSources[imprint.KindMemory]
	tqs, est, err := db.termPlan(ctx, src, "words", []string{"user_id"}, true)
	if err != nil {
		t.Fatal(err)
	}
	common := []bool{false}
	if err := db.checkCommon(ctx, src, "words", tqs, est, 101, common); err != nil {
		t.Fatal(err)
	}
	if common[0] {
		t.Errorf("user_id (%s), held by 1 live memory, estimated at %d, is called common; want rare", tqs[0], est[0])
	}
	hits, err := db.SearchText(ctx, imprint.TextQuery{Scope: scope, Kind: imprint.KindMemory, Text: "user_id alpha", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	if len(ids) == 0 || ids[0] != "m00000" {
		t.Errorf("search %q: hits %v; want m00000, the only memory holding user_id, first", "user_id alpha", ids)
	}
}
