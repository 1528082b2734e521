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
	// betweenPeople marks the session between people before keep is stored.
	betweenPeople bool

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
	g.doAll([]*call{c}, commit)
}

// doAll commits cs, in order, and returns when all of them are committed
// (or failed). When no commit is in flight they are committed at once, in
// groups of at most maxGroup; otherwise they queue, in order, and are
// committed with the calls around them as do's are.
func (g *grouper) doAll(cs []*call, commit func(group []*call)) {
	if len(cs) == 0 {
		return
	}
	g.mu.Lock()
	if !g.busy {
		g.busy = true
		g.mu.Unlock()
		for len(cs) > 0 {
			n := min(len(cs), maxGroup)
			commit(cs[:n])
			cs = cs[n:]
		}
		g.handoff(nil, nil)
		return
	}
	g.queue = append(g.queue, cs...)
	g.mu.Unlock()
	for _, c := range cs {
		if lead := <-c.wake; lead {
			g.lead(c, commit)
		}
	}
}

// lead commits the group c heads (c is the head of the queue), then hands
// off.
func (g *grouper) lead(c *call, commit func(group []*call)) {
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	group := append([]*call(nil), g.queue[:n]...)
	g.queue = append(g.queue[:0:0], g.queue[n:]...)
	g.mu.Unlock()
	commit(group)
	g.handoff(c, group)
}

// handoff wakes the head of the queue to lead the next group (or marks
// the grouper idle), then tells the other calls of the group just
// committed, but c, that they are done.
func (g *grouper) handoff(c *call, group []*call) {
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
