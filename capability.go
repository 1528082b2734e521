package imprint

import (
	"context"
	"time"
)

// Optional store capabilities.
//
// A capability every backend can provide is a method of the store
// interfaces (Store, ServiceStore and the interfaces they embed). A
// capability some backends cannot provide, or that a pipeline can do
// without, is an optional one: a root interface whose Supports… method says
// whether the store really has it. Pipelines find it with the As… function
// of the capability, which checks both that the store implements the
// interface and that it says it supports it, and fall back to the required
// methods otherwise; storetest.Run asks the same question and runs the
// capability's cases only when the answer is yes (the way River's driver
// suite asks a driver). A wrapper store that embeds a backend can so turn
// a capability off by answering false.
//
// The optional capabilities are BatchAppender (record: group commit),
// ConcurrentWriter (record: a large group in a few transactions at once),
// CaptureSaver (capture: many captures in one transaction), MemoryBatchWriter
// (extract: a window's memories in one transaction), LiveHashLister
// (extract: the exact-text pre-check of many memories in one query),
// EpisodeBatchReader (an import: the stored episodes of a batch in one
// query), PendingBatchReader (extract: the sessions of a batch and their
// pending messages in two queries), TermCounter
// (extract: the keyword recall's term weights), JobEngineHost (schedule:
// an outside job engine writing in the store's transactions), Browser
// (the web viewer: counts and episode lists, browse.go), Dumper and
// Loader (imprint migrate: the copy of a store into another, load.go), and
// VectorSearchDescriber (imprint doctor: which vector search a store
// uses). A records log has one, LogRewriter (a purge: lines removed,
// manage.go).

// CaptureSaver is an optional capability of an EpisodeStore: it saves many
// captures in one transaction. capture.Runner.RunMany uses it and falls
// back to one SaveCapture per episode when the store lacks it.
type CaptureSaver interface {
	// SupportsCaptureSaver reports whether SaveCaptures works on this store.
	SupportsCaptureSaver() bool
	// SaveCaptures does what SaveCapture does for each episode and its
	// traces (traces[i] belongs to eps[i]), all in one transaction: any
	// error saves nothing. ErrInvalid when the lengths differ; ErrConflict
	// when an episode id belongs to another scope.
	SaveCaptures(ctx context.Context, eps []Episode, traces [][]Trace) error
}

// EpisodeBatchReader is an optional capability of an EpisodeStore: it
// reads many episodes in one query, for a store where each query is a
// round trip to a server. An import asks it which episodes of a capture
// batch are stored already, and asks episode by episode when the store
// lacks it.
type EpisodeBatchReader interface {
	// SupportsEpisodeBatch reports whether GetEpisodes works on this store.
	SupportsEpisodeBatch() bool
	// GetEpisodes returns those of ids that are episodes of scope, each
	// once and as GetEpisode returns it (the turns of an open episode's
	// rows included), in no particular order; an id not in scope is left
	// out. ErrInvalid for an incomplete scope.
	GetEpisodes(ctx context.Context, scope Scope, ids []string) ([]Episode, error)
}

// AsEpisodeBatchReader returns s as an EpisodeBatchReader when it
// implements one and supports it.
func AsEpisodeBatchReader(s any) (EpisodeBatchReader, bool) {
	r, ok := s.(EpisodeBatchReader)
	return r, ok && r.SupportsEpisodeBatch()
}

// SessionPending is one session of a PendingBatch: the session, as
// GetSession returns it (Found false when the scope has none of that id),
// and its first pending messages, as PendingMessages returns them.
type SessionPending struct {
	Session Session
	Found   bool
	Pending []Message
}

// PendingBatchReader is an optional capability of a Store: it reads many
// sessions and their pending messages at once, for a store where each
// query is a round trip to a server. Extraction's planner asks it for the
// sessions of a batch, and asks session by session (GetSession, then
// PendingMessages) when the store lacks it.
type PendingBatchReader interface {
	// SupportsPendingBatch reports whether PendingBatch works on this
	// store.
	SupportsPendingBatch() bool
	// PendingBatch returns, for each of ids in turn (a repeated id too),
	// the session of scope and up to limit of its messages after its
	// cursor (all of them for limit <= 0), oldest first and without their
	// vectors. ErrInvalid for an incomplete scope.
	PendingBatch(ctx context.Context, scope Scope, ids []string, limit int) ([]SessionPending, error)
}

// AsPendingBatchReader returns s as a PendingBatchReader when it
// implements one and supports it.
func AsPendingBatchReader(s any) (PendingBatchReader, bool) {
	r, ok := s.(PendingBatchReader)
	return r, ok && r.SupportsPendingBatch()
}

// MemoryPut is one write of PutMemories: what PutMemory(Memory, Supersede)
// writes.
type MemoryPut struct {
	Memory    Memory
	Supersede []string
}

// MemoryBatchWriter is an optional capability of a MemoryStore: it writes
// many memories in one transaction (one commit, one wait for the disk).
// Extraction uses it for the memories of the windows it planned together
// and falls back to one PutMemory each when the store lacks it or the batch
// fails.
type MemoryBatchWriter interface {
	// SupportsMemoryBatch reports whether PutMemories works on this store.
	SupportsMemoryBatch() bool
	// PutMemories does what PutMemory does for each put, in order, in one
	// transaction: a put sees the ones before it (it may supersede a
	// memory written earlier in the call), and any error writes nothing.
	// The errors are PutMemory's, of the first put that fails.
	PutMemories(ctx context.Context, puts []MemoryPut) error
}

// AsMemoryBatchWriter returns s as a MemoryBatchWriter when it implements
// one and supports it.
func AsMemoryBatchWriter(s any) (MemoryBatchWriter, bool) {
	w, ok := s.(MemoryBatchWriter)
	return w, ok && w.SupportsMemoryBatch()
}

// CursorMove is one AdvanceCursor of AdvanceCursors: the session's cursor
// to ToSeq (never backwards), its last scene name and extraction time.
type CursorMove struct {
	SessionID string
	ToSeq     int64
	LastScene string
	At        time.Time
}

// CursorBatchAdvancer is an optional capability of a SessionStore: it
// moves the cursors of many sessions of a scope in one transaction (one
// round trip and one commit instead of one each). Extraction's batch
// planner uses it for the sessions of the windows it wrote together and
// moves them one by one when the store lacks it or the batch fails.
type CursorBatchAdvancer interface {
	// SupportsCursorBatch reports whether AdvanceCursors works on this
	// store.
	SupportsCursorBatch() bool
	// AdvanceCursors does what AdvanceCursor does for each move, in order,
	// in one transaction: a session moved twice ends with the furthest
	// cursor and the later move's scene and time. ErrNotFound naming the
	// first session not in scope, ErrInvalid for an incomplete scope or a
	// move without a session; these move nothing. Another error (a commit
	// whose outcome is unknown, a session deleted meanwhile) may leave some
	// cursors moved: the moves are idempotent, so the caller retries them
	// or moves them one by one.
	AdvanceCursors(ctx context.Context, scope Scope, moves []CursorMove) error
}

// AsCursorBatchAdvancer returns s as a CursorBatchAdvancer when it
// implements one and supports it.
func AsCursorBatchAdvancer(s any) (CursorBatchAdvancer, bool) {
	a, ok := s.(CursorBatchAdvancer)
	return a, ok && a.SupportsCursorBatch()
}

// MergeCursorMoves returns the moves of AdvanceCursors one per session, in
// the order of each session's first move: the furthest cursor and the last
// scene and time of its moves, as AdvanceCursor one after another leaves
// them. ErrInvalid for a move without a session.
func MergeCursorMoves(moves []CursorMove) ([]CursorMove, error) {
	out := make([]CursorMove, 0, len(moves))
	at := make(map[string]int, len(moves))
	for i, m := range moves {
		if m.SessionID == "" {
			return nil, Invalidf("moves[%d]: session_id is required", i)
		}
		j, ok := at[m.SessionID]
		if !ok {
			at[m.SessionID] = len(out)
			out = append(out, m)
			continue
		}
		m.ToSeq = max(m.ToSeq, out[j].ToSeq)
		out[j] = m
	}
	return out, nil
}

// LiveHashLister is an optional capability of a MemoryStore: it answers
// HasLiveMemoryHash for many hashes in one query, with the workspaces of
// the memories that have them (which FindMemoryByHash would read), for a
// store where each query is a round trip to a server. Extraction's batch
// planner uses it and asks hash by hash when the store lacks it.
type LiveHashLister interface {
	// SupportsLiveHashes reports whether LiveMemoryHashes works on this
	// store.
	SupportsLiveHashes() bool
	// LiveMemoryHashes returns those of hashes that a live memory of the
	// scope has, each with the workspaces of its live memories ("" for a
	// memory of none; each once, in no particular order). A hash no live
	// memory has is not in the map. ErrInvalid for an incomplete scope.
	LiveMemoryHashes(ctx context.Context, scope Scope, hashes []string) (map[string][]string, error)
}

// AsLiveHashLister returns s as a LiveHashLister when it implements one
// and supports it.
func AsLiveHashLister(s any) (LiveHashLister, bool) {
	l, ok := s.(LiveHashLister)
	return l, ok && l.SupportsLiveHashes()
}

// TermCounter is an optional capability of a Searcher: it counts, cheaply
// and capped, the records of a scope holding each of some terms, so a
// keyword query can prefer rare terms. The dedup recall of extraction uses
// it and ranks terms by length when the store lacks it.
type TermCounter interface {
	// SupportsTermCounts reports whether CountTermMatches works on this store.
	SupportsTermCounts() bool
	// CountTermMatches returns, for each term, how many records of kind in
	// scope hold it in the keyword index, counting at most limit per term.
	// A term with no searchable token counts 0. ErrInvalid for an unknown
	// kind or an incomplete scope.
	CountTermMatches(ctx context.Context, scope Scope, kind Kind, terms []string, limit int) ([]int, error)
}

// VectorSearchDescriber is an optional capability of a store with more
// than one way to search vectors (PostgreSQL with or without pgvector): it
// says which one it uses, for imprint doctor's store check.
type VectorSearchDescriber interface {
	// SupportsVectorSearchDescription reports whether VectorSearch
	// describes the store's vector search.
	SupportsVectorSearchDescription() bool
	// VectorSearch describes, on one line, how the store searches
	// vectors.
	VectorSearch() string
}

// AsVectorSearchDescriber returns s as a VectorSearchDescriber when it
// implements one and supports it.
func AsVectorSearchDescriber(s any) (VectorSearchDescriber, bool) {
	v, ok := s.(VectorSearchDescriber)
	return v, ok && v.SupportsVectorSearchDescription()
}

// AsLogRewriter returns log as a LogRewriter when it implements one and
// supports it.
func AsLogRewriter(log any) (LogRewriter, bool) {
	rw, ok := log.(LogRewriter)
	return rw, ok && rw.SupportsRewrite()
}

// AsBatchAppender returns s as a BatchAppender when it implements one and
// supports it.
func AsBatchAppender(s any) (BatchAppender, bool) {
	b, ok := s.(BatchAppender)
	return b, ok && b.SupportsBatchAppend()
}

// AsCaptureSaver returns s as a CaptureSaver when it implements one and
// supports it.
func AsCaptureSaver(s any) (CaptureSaver, bool) {
	c, ok := s.(CaptureSaver)
	return c, ok && c.SupportsCaptureSaver()
}

// AsTermCounter returns s as a TermCounter when it implements one and
// supports it.
func AsTermCounter(s any) (TermCounter, bool) {
	c, ok := s.(TermCounter)
	return c, ok && c.SupportsTermCounts()
}
