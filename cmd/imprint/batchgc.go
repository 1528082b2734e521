package main

import (
	"runtime/debug"
	"sync"
)

// batchGCPercent is the garbage collector's target for the batch commands
// (import, migrate): they allocate briefly and a lot (rows, vectors, COPY
// buffers) over a small live heap, and at Go's default of 100 a PostgreSQL
// import spent a fifth of its CPU collecting. 400 lets the heap grow to
// five times what is live between collections; the import holds a few
// sources at a time, so that stays bounded.
const batchGCPercent = 400

// batchRuns counts the batch commands running (in-process, in tests, they
// may overlap); the first sets the target and the last restores prev.
var batchRuns struct {
	sync.Mutex
	n    int
	prev int
}

// batchGC sets the collector's target for a batch command unless the
// environment sets GOGC (the user's choice wins) and returns the function
// that restores the previous one once no batch command runs.
func (a *App) batchGC() (restore func()) {
	if _, set := a.lookupEnv("GOGC"); set {
		return func() {}
	}
	batchRuns.Lock()
	defer batchRuns.Unlock()
	if batchRuns.n == 0 {
		batchRuns.prev = debug.SetGCPercent(batchGCPercent)
	}
	batchRuns.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			batchRuns.Lock()
			defer batchRuns.Unlock()
			if batchRuns.n--; batchRuns.n == 0 {
				debug.SetGCPercent(batchRuns.prev)
			}
		})
	}
}
