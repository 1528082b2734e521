package sqlite

import (
	"database/sql"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// WAL checkpoints run on a connection of their own, in the background, so
// that no write transaction pays for them. With synchronous=NORMAL a commit
// only appends to the WAL; the two fsyncs of a checkpoint (WAL, then the
// database file) are the expensive part, and SQLite's automatic checkpoint
// runs them inside whichever commit crosses the threshold. Measured on
// one-memory transactions into 100k memories, moving them off the writer
// raised the insert rate from about 2.9k/s to 4-5k/s (see
// docs/benchmarks.md).
//
// The writer keeps an automatic checkpoint as a backstop (walBackstopPages)
// so the WAL stays bounded should the background checkpointer fall behind.
const (
	// ckptEvery is how many commits wake the checkpointer early.
	ckptEvery = 64
	// ckptInterval is how often it runs when any commit happened since.
	ckptInterval = 250 * time.Millisecond
	// walBackstopPages is the writer's wal_autocheckpoint: far above what
	// the background checkpointer lets the WAL reach, about 64 MB.
	walBackstopPages = 16384
)

// checkpointer runs PASSIVE checkpoints on its own connection: they copy
// what readers no longer need into the database file and never block the
// writer or a reader.
type checkpointer struct {
	c       *sql.DB
	commits atomic.Int64
	wake    chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup
}

func newCheckpointer(c *sql.DB) *checkpointer {
	k := &checkpointer{c: c, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	k.done.Add(1)
	go k.run()
	return k
}

// committed notes one write commit; every ckptEvery commits it wakes the
// checkpointer without waiting.
func (k *checkpointer) committed() {
	if k.commits.Add(1)%ckptEvery == 0 {
		select {
		case k.wake <- struct{}{}:
		default:
		}
	}
}

func (k *checkpointer) run() {
	defer k.done.Done()
	t := time.NewTicker(ckptInterval)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-k.stop:
			return
		case <-k.wake:
		case <-t.C:
		}
		n := k.commits.Load()
		if n == last {
			continue
		}
		last = n
		var busy, frames, done int
		if err := k.c.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done); err != nil {
			slog.Warn("wal checkpoint failed", "err", err)
		}
	}
}

// close stops the background loop and closes the connection.
func (k *checkpointer) close() error {
	close(k.stop)
	k.done.Wait()
	return k.c.Close()
}
