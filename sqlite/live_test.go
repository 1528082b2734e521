package sqlite

import (
	"fmt"
	"os"
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
