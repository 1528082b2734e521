package httpapi

import (
	"context"

	"github.com/imprint-dev/imprint"
)

// ClientReader reads memories, traces and episodes through a running
// service, with the methods the store's readers have (GetMemory,
// ListMemories, GetTrace, ListTraces, …): the MCP server's reader when
// imprint mcp runs beside an imprint serve.
type ClientReader struct{ C *Client }

// GetMemory reads a memory (GET /v1/memories/{id}); ErrNotFound when it is
// not in scope.
func (r ClientReader) GetMemory(ctx context.Context, scope imprint.Scope, id string) (imprint.Memory, error) {
	m, err := r.C.Memory(ctx, scope, id)
	return m.Memory, err
}

// MemoryHistory returns the versions the memory id supersedes, newest
// first.
func (r ClientReader) MemoryHistory(ctx context.Context, scope imprint.Scope, id string) ([]imprint.Memory, error) {
	m, err := r.C.Memory(ctx, scope, id)
	return m.History, err
}

// ListMemories lists memories newest first (GET /v1/memories).
func (r ClientReader) ListMemories(ctx context.Context, scope imprint.Scope, f imprint.MemoryFilter) ([]imprint.Memory, error) {
	return r.C.Memories(ctx, scope, f)
}

// GetTrace reads a trace; ErrNotFound when it is not in scope.
func (r ClientReader) GetTrace(ctx context.Context, scope imprint.Scope, id string) (imprint.Trace, error) {
	return r.C.Trace(ctx, scope, id)
}

// GetEpisode reads an episode; ErrNotFound when it is not in scope.
func (r ClientReader) GetEpisode(ctx context.Context, scope imprint.Scope, id string) (imprint.Episode, error) {
	return r.C.Episode(ctx, scope, id)
}

// ListTraces lists traces in step order (GET /v1/traces).
func (r ClientReader) ListTraces(ctx context.Context, scope imprint.Scope, f imprint.TraceFilter) ([]imprint.Trace, error) {
	return r.C.Traces(ctx, scope, f)
}
