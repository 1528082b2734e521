package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// liveTurn is an assistant turn of a few hundred bytes, like a real reply.
func liveTurn(i int) imprint.Turn {
	return imprint.Turn{ID: fmt.Sprintf("t%06d", i), Role: imprint.RoleAssistant,
		Content: fmt.Sprintf("reply %d: ", i) + strings.Repeat("a reply of moderate length ", 12), TS: imprint.Now()}
}

// seedOpen opens a new episode of session sid holding n turns.
func seedOpen(tb testing.TB, db *DB, sid string, n int) imprint.Episode {
	tb.Helper()
	turns := make([]imprint.Turn, n)
	for i := range turns {
		turns[i] = liveTurn(i)
	}
	ep, err := db.AppendTurns(tb.Context(), benchScope, sid, turns, imprint.NewID())
	if err != nil {
		tb.Fatal(err)
	}
	return ep
}

// BenchmarkAppendTurn measures appending one turn to an open episode that
// already holds 10 or 2,000 turns (it stays within 10 turns of that size:
// every 10 appends the episode is closed and a new one seeded, off the
// clock). The cost should not depend on the size.
func BenchmarkAppendTurn(b *testing.B) {
	for _, size := range []int{10, 2000} {
		b.Run(fmt.Sprintf("turns=%d", size), func(b *testing.B) {
			db := openTemp(b)
			defer db.Close()
			ctx := b.Context()
			var ep imprint.Episode
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%10 == 0 {
					b.StopTimer()
					if ep.ID != "" {
						if _, err := db.CloseEpisode(ctx, benchScope, ep.ID, imprint.ClosedFinalized, nil); err != nil {
							b.Fatal(err)
						}
					}
					ep = seedOpen(b, db, "s", size)
					b.StartTimer()
				}
				if _, err := db.AppendTurns(ctx, benchScope, "s", []imprint.Turn{liveTurn(size + i)}, imprint.NewID()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAppendTurnWritesDoNotGrow checks that appending one turn to an open
// episode of 2,000 turns writes no more to the database than appending one
// to an episode of 10: the WAL grows by the same few pages, where writing
// the whole episode again would add hundreds. Checkpoints are stopped, so
// the WAL only grows and its size counts every page written.
func TestAppendTurnWritesDoNotGrow(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	defer db.Close()
	ctx := t.Context()
	if err := db.ckpt.close(); err != nil {
		t.Fatal(err)
	}
	db.ckpt = nil
	if _, err := db.w.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
		t.Fatal(err)
	}
	var pageSize int64
	if err := db.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	walPages := func() int64 {
		fi, err := os.Stat(db.Path() + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size() / (pageSize + 24) // a WAL frame: header and page
	}
	seedOpen(t, db, "small", 10)
	seedOpen(t, db, "large", 2000)
	written := map[string]int64{}
	for _, sid := range []string{"small", "large"} {
		for i := range 5 {
			before := walPages()
			if _, err := db.AppendTurns(ctx, benchScope, sid, []imprint.Turn{liveTurn(5000 + i)}, imprint.NewID()); err != nil {
				t.Fatal(err)
			}
			// The least of five: a B-tree page split may add a page
			// or two to any one append.
			if n := walPages() - before; i == 0 || n < written[sid] {
				written[sid] = n
			}
		}
	}
	t.Logf("WAL pages written by one append: %v", written)
	if written["large"] > written["small"]+2 {
		t.Errorf("appending a turn wrote %d pages at 2,000 turns and %d at 10: the append grows with the episode",
			written["large"], written["small"])
	}
	ep, err := db.OpenEpisode(ctx, benchScope, "large")
	if err != nil || len(ep.Turns) != 2005 || ep.Turns[2004].ID != liveTurn(5004).ID {
		t.Fatalf("large episode after the appends: %d turns, %v", len(ep.Turns), err)
	}
}

// TestMigrationMovesOpenTurnsToRows checks that migration 0009 carries
// over the open episodes of a store written before it: their turns move
// to rows, read back whole and in order, and the next append follows
// them; closed episodes keep their turns column.
func TestMigrationMovesOpenTurnsToRows(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "imprint.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	seedOpen(t, db, "open", 3)
	closed := seedOpen(t, db, "closed", 2)
	if _, err := db.CloseEpisode(t.Context(), benchScope, closed.ID, imprint.ClosedFinalized, nil); err != nil {
		t.Fatal(err)
	}
	// Back to the layout before 0009: the open episode's turns in its column.
	for _, q := range []string{
		`UPDATE episodes SET turns = (SELECT json_group_array(json(turn)) FROM (SELECT turn FROM episode_turns ORDER BY seq)) WHERE status = 'open'`,
		`DROP TABLE episode_turns`,
		`DELETE FROM migrations WHERE version = 9`,
	} {
		if _, err := db.w.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	db, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var inColumn int
	if err := db.r.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM episodes WHERE status = 'open' AND turns <> '[]'`).Scan(&inColumn); err != nil || inColumn != 0 {
		t.Errorf("open episodes with turns in the column after the migration: %d, %v", inColumn, err)
	}
	ep, err := db.AppendTurns(t.Context(), benchScope, "open", []imprint.Turn{liveTurn(1), liveTurn(3)}, imprint.NewID())
	if err != nil || ep.TurnCount != 4 || len(ep.Turns) != 1 {
		t.Fatalf("append after the migration: count %d, %d added, %v; want 4 and 1 (turn 1 is a repeat)", ep.TurnCount, len(ep.Turns), err)
	}
	open, err := db.OpenEpisode(t.Context(), benchScope, "open")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tn := range open.Turns {
		got = append(got, tn.ID)
	}
	if strings.Join(got, ",") != "t000000,t000001,t000002,t000003" {
		t.Errorf("open episode after the migration: turns %v", got)
	}
	old, err := db.GetEpisode(t.Context(), benchScope, closed.ID)
	if err != nil || len(old.Turns) != 2 {
		t.Errorf("closed episode after the migration: %d turns, %v", len(old.Turns), err)
	}
}
