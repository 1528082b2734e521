package imprint

import "context"

// Totals is what a store holds, over every scope: the gauges of the
// service's /metrics, beside its counters since start. It names no record
// and no scope.
type Totals struct {
	// Memories counts live memories (neither superseded nor forgotten)
	// by type.
	Memories map[MemoryType]int `json:"memories"`
	// Traces, Messages and Sessions count every stored trace, L0 message
	// and session.
	Traces   int `json:"traces"`
	Messages int `json:"messages"`
	Sessions int `json:"sessions"`
}

// TotalsCounter counts what a store holds (see Totals).
type TotalsCounter interface {
	// Totals counts the store's live memories by type, traces, messages
	// and sessions across every scope. Types without memories are left
	// out of Memories. ErrUnavailable when the store cannot be read.
	Totals(ctx context.Context) (Totals, error)
}
