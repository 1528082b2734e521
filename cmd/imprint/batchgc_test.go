package main

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestBatchGC: a batch command runs with the collector at batchGCPercent
// and leaves it as it was; a GOGC in the environment is left alone.
func TestBatchGC(t *testing.T) {
	before := gcPercent()
	a := newApp(func(string) (string, bool) { return "", false }, nil, nil, nil)
	restore := a.batchGC()
	if got := gcPercent(); got != batchGCPercent {
		t.Errorf("during a batch command GC percent %d, want %d", got, batchGCPercent)
	}
	// A second command overlapping the first (in-process) keeps the
	// target until both are done.
	second := a.batchGC()
	restore()
	if got := gcPercent(); got != batchGCPercent {
		t.Errorf("one of two batch commands done: GC percent %d, want %d", got, batchGCPercent)
	}
	second()
	if got := gcPercent(); got != before {
		t.Errorf("after: GC percent %d, want %d as before", got, before)
	}

	a = newApp(func(k string) (string, bool) { return "50", k == "GOGC" }, nil, nil, nil)
	restore = a.batchGC()
	if got := gcPercent(); got != before {
		t.Errorf("with GOGC set: GC percent %d, want %d (the environment's)", got, before)
	}
	restore()
}
