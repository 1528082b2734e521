package imprint

import "context"

// RecordCounts are how many records a scope holds, for an overview.
type RecordCounts struct {
	Sessions int `json:"sessions"`
	Messages int `json:"messages"`
	Episodes int `json:"episodes"`
	Traces   int `json:"traces"`
	// Memories counts the live memories of each type.
	Memories map[MemoryType]int `json:"memories"`
}

// EpisodeFilter selects episodes. Zero fields do not filter; Limit 0 means
// 100.
type EpisodeFilter struct {
	SessionID string
	Limit     int
}

// Browser is an optional capability of a store: what a viewer needs to
// show a scope without reading all of it. The web viewer uses it and shows
// less (no counts, no episode list) when the store lacks it.
type Browser interface {
	// SupportsBrowse reports whether CountRecords and ListEpisodes work on
	// this store.
	SupportsBrowse() bool
	// CountRecords counts the scope's sessions, messages, episodes, traces
	// and live memories by type. ErrInvalid for an incomplete scope.
	CountRecords(ctx context.Context, scope Scope) (RecordCounts, error)
	// ListEpisodes returns the scope's episodes newest first (by
	// CreatedAt), without their turns: TurnCount says how many there are.
	// ErrInvalid for an incomplete scope.
	ListEpisodes(ctx context.Context, scope Scope, f EpisodeFilter) ([]Episode, error)
}

// AsBrowser returns s as a Browser when it implements one and supports it.
func AsBrowser(s any) (Browser, bool) {
	b, ok := s.(Browser)
	return b, ok && b.SupportsBrowse()
}
