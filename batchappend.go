package imprint

import "context"

// MessageBatch is the messages of one session for BatchAppender: what one
// AppendMessages call would take.
type MessageBatch struct {
	Scope     Scope
	SessionID string
	Messages  []Message
	// MarkDueAt, when above zero, durably sets the session's ExtractionDue
	// flag in the same transaction when the batch recorded at least one
	// message and the session's RoundsSinceExtraction after the batch is at
	// least MarkDueAt (the returned Session shows the flag set). Zero leaves
	// the flag alone, as AppendMessages does.
	MarkDueAt int
}

// BatchAppender is an optional capability of a MessageStore (see
// capability.go): it records many batches, of the same or different
// sessions, in one transaction. A recorder uses it to commit concurrent
// calls together (group commit) and falls back to AppendMessages per call
// when the store lacks it.
type BatchAppender interface {
	// SupportsBatchAppend reports whether AppendMessageBatches works on
	// this store.
	SupportsBatchAppend() bool
	// AppendMessageBatches applies the batches in order in one transaction
	// and returns, for each, the AppendResult that AppendMessages would have
	// given had the batches been appended one after another: an id recorded
	// by an earlier batch of the same session is a duplicate of the later
	// one. The batches are validated as AppendMessages validates them
	// before anything is written; any error stores nothing.
	AppendMessageBatches(ctx context.Context, batches []MessageBatch) ([]AppendResult, error)
}

// ConcurrentWriter is an optional capability of a Store (see
// capability.go) whose write transactions of different sessions run at
// the same time, each on a connection of its own to a server that spreads
// them over its cores, instead of one after another (SQLite's one
// writer). A recorder with a large group of sessions to store splits it
// into a few AppendMessageBatches calls made at once, and makes one call
// when the store lacks it.
type ConcurrentWriter interface {
	// SupportsConcurrentWrites reports whether write transactions of
	// different sessions run at once on this store.
	SupportsConcurrentWrites() bool
}

// AsConcurrentWriter returns s as a ConcurrentWriter when it implements
// one and supports it.
func AsConcurrentWriter(s any) (ConcurrentWriter, bool) {
	w, ok := s.(ConcurrentWriter)
	return w, ok && w.SupportsConcurrentWrites()
}
