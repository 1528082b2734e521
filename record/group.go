package record

import (
	"context"
	"sync"

	imprint "github.com/imprint-dev/imprint"
)

// maxGroup is the most Record calls committed together.
const maxGroup = 64

// call is one Record call waiting to be committed.
type call struct {
	ctx       context.Context
	scope     imprint.Scope
	sessionID string
	keep      []imprint.Message

	// Set by the commit.
	ar       imprint.AppendResult
	inserted map[string]bool
	notified bool
	err      error

	// wake receives true when the call must lead the next group, false
	// when another leader committed it.
	wake chan bool
}

// grouper combines concurrent calls into groups (group commit). A call that
// finds no commit in flight commits alone at once; calls arriving while one
// is in flight queue up, and when it ends the oldest queued call leads the
// next group: the queued calls in arrival order, at most maxGroup of them.
type grouper struct {
	mu    sync.Mutex
	busy  bool
	queue []*call
}

// do commits c, alone or with others, and returns when c is committed (or
// failed). commit gets the calls of a group in arrival order.
func (g *grouper) do(c *call, commit func(group []*call)) {
	g.mu.Lock()
	var group []*call
	if !g.busy {
		g.busy = true
		g.mu.Unlock()
		group = []*call{c}
	} else {
		g.queue = append(g.queue, c)
		g.mu.Unlock()
		if lead := <-c.wake; !lead {
			return
		}
		// c leads: it is the head of the queue.
		g.mu.Lock()
		n := min(len(g.queue), maxGroup)
		group = append([]*call(nil), g.queue[:n]...)
		g.queue = append(g.queue[:0:0], g.queue[n:]...)
		g.mu.Unlock()
	}

	commit(group)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].wake <- true
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	for _, o := range group {
		if o != c {
			o.wake <- false
		}
	}
}

// queued returns how many calls wait (for tests).
func (g *grouper) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}
