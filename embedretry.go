package imprint

import "context"

// EmbedRetryStore finds the records of a scope that were stored without a
// vector (the embedder failed or was unreachable when they were written)
// and fills their vectors in: what the embedding retry job (JobEmbed) of
// imprint serve works through (part of Store). Setting a vector never
// replaces one a record already has.
type EmbedRetryStore interface {
	// UnembeddedMessages returns up to limit messages of the scope that
	// have no vector, oldest first.
	UnembeddedMessages(ctx context.Context, scope Scope, limit int) ([]Message, error)
	// UnembeddedMemories returns up to limit live memories of the scope
	// that have no vector, oldest first.
	UnembeddedMemories(ctx context.Context, scope Scope, limit int) ([]Memory, error)
	// UnembeddedTraces returns up to limit traces of the scope that have
	// neither a summary nor an action vector, oldest first.
	UnembeddedTraces(ctx context.Context, scope Scope, limit int) ([]Trace, error)
	// SetMemoryVector stores vec, made by embedder, for the memory when it
	// has none; a memory not in scope or already embedded is left alone.
	SetMemoryVector(ctx context.Context, scope Scope, id string, vec []float32, embedder string) error
	// SetTraceVectors stores the summary and action vectors (either may be
	// nil) of a trace that has neither; others are left alone.
	SetTraceVectors(ctx context.Context, scope Scope, id string, summary, action []float32, embedder string) error
}

// EmbedJobKey is the unique key of the embedding retry job of a scope, so at
// most one unfinished one exists per scope.
func EmbedJobKey(scope Scope) string {
	return ScopedKey("embed", scope)
}
