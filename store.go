package imprint

import (
	"context"
	"time"
)

// Kind names what a search hit or a vector belongs to.
type Kind string

// Kinds of searchable records.
const (
	KindMemory  Kind = "memory"
	KindTrace   Kind = "trace"
	KindMessage Kind = "message"
)

// Hit is one search result. Score is higher for better matches; its scale
// depends on the search (BM25-derived for text, cosine for vectors, RRF for
// hybrid). Fields that do not apply to the kind are nil.
type Hit struct {
	Kind             Kind     `json:"kind"`
	ID               string   `json:"id"`
	Score            float64  `json:"score"`
	Text             string   `json:"text"`
	SessionID        *string  `json:"session_id"`
	EpisodeID        *string  `json:"episode_id"`
	SourceMessageIDs []string `json:"source_message_ids"`
}

// TextQuery is a keyword search. The store tokenizes Text, quotes each term
// and ORs them, so no query text can change the SQL; CJK queries of two or
// more characters match.
type TextQuery struct {
	Scope Scope
	Kind  Kind
	Text  string
	// SessionID restricts the search to one session when set.
	SessionID string
	// Workspace, when set, keeps the records of that workspace only; ""
	// keeps every workspace of the scope (unless IncludeGlobal).
	Workspace string
	// IncludeGlobal keeps the records of Workspace and the workspace-less
	// ones (persona, global instructions), what a session in Workspace
	// sees: dedup candidates and recall. With Workspace "" it keeps the
	// workspace-less records only.
	IncludeGlobal bool
	// ExcludeIDs are left out of the results (e.g. the memories of the
	// batch being deduplicated).
	ExcludeIDs []string
	Limit      int
}

// VectorQuery is a nearest-neighbour search by cosine similarity among the
// vectors made by Embedder. Live memories only for KindMemory.
type VectorQuery struct {
	Scope     Scope
	Kind      Kind
	Vector    []float32
	Embedder  string
	SessionID string
	// Workspace, when set, keeps the records of that workspace only; ""
	// keeps every workspace of the scope (unless IncludeGlobal).
	Workspace string
	// IncludeGlobal keeps the records of Workspace and the workspace-less
	// ones (persona, global instructions), what a session in Workspace
	// sees: dedup candidates and recall. With Workspace "" it keeps the
	// workspace-less records only.
	IncludeGlobal bool
	// MinScore drops hits whose cosine is below it.
	MinScore   float64
	ExcludeIDs []string
	Limit      int
}

// Searcher finds records by keywords and by vectors, always within a scope.
type Searcher interface {
	// SearchText returns hits ranked by BM25, best first.
	SearchText(ctx context.Context, q TextQuery) ([]Hit, error)
	// SearchVector returns hits ranked by cosine, best first. Records without
	// a vector of q.Embedder are not candidates.
	SearchVector(ctx context.Context, q VectorQuery) ([]Hit, error)
}

// AppendResult says what AppendMessages did.
type AppendResult struct {
	// Inserted are the ids of the messages newly recorded, in input order.
	Inserted []string
	// Duplicates are the ids already recorded for the session.
	Duplicates []string
	// Session is the session after the append.
	Session Session
}

// MessageStore keeps L0 messages and the sessions they belong to.
type MessageStore interface {
	// AppendMessages records msgs (all of one session and scope) in one
	// transaction, skipping ids already recorded for the session, creating
	// the session when needed and adding recorded user messages to its
	// RoundsSinceExtraction. Messages must have ids.
	AppendMessages(ctx context.Context, scope Scope, sessionID string, msgs []Message) (AppendResult, error)
	// GetMessage returns ErrNotFound when the message is not in scope.
	GetMessage(ctx context.Context, scope Scope, sessionID, id string) (Message, error)
	// PendingMessages returns up to limit messages of the session after its
	// extraction cursor, oldest first.
	PendingMessages(ctx context.Context, scope Scope, sessionID string, limit int) ([]Message, error)
	// CountPending returns how many messages of the session are after its cursor.
	CountPending(ctx context.Context, scope Scope, sessionID string) (int, error)
	// MessagesBefore returns up to limit messages of the session with Seq
	// below beforeSeq, oldest first (the newest ones before beforeSeq).
	MessagesBefore(ctx context.Context, scope Scope, sessionID string, beforeSeq int64, limit int) ([]Message, error)
	// SetMessageVectors stores vectors for messages that have none.
	SetMessageVectors(ctx context.Context, scope Scope, sessionID string, vecs map[string][]float32, embedder string) error
}

// SessionStore keeps sessions and their extraction cursors.
type SessionStore interface {
	// GetSession returns ErrNotFound when the session is not in scope.
	GetSession(ctx context.Context, scope Scope, id string) (Session, error)
	// ListSessions returns the scope's sessions, oldest first.
	ListSessions(ctx context.Context, scope Scope) ([]Session, error)
	// AdvanceCursor moves the session's cursor to toSeq (never backwards),
	// sets its last scene name and extraction time, and resets its round
	// count and due flag. It is called only after a successful window.
	AdvanceCursor(ctx context.Context, scope Scope, sessionID string, toSeq int64, lastScene string, at time.Time) error
	// MarkExtractionDue sets or clears the session's durable due flag.
	MarkExtractionDue(ctx context.Context, scope Scope, sessionID string, due bool) error
	// MarkBetweenPeople durably sets the session's BetweenPeople flag,
	// creating the session when it does not exist yet; marking a marked
	// session again changes nothing. ErrInvalid for a missing scope or id.
	MarkBetweenPeople(ctx context.Context, scope Scope, sessionID string) error
}

// EpisodeStore keeps episodes and their traces.
type EpisodeStore interface {
	// SaveEpisode inserts or updates the episode (not its traces). It returns
	// ErrConflict when the id belongs to another scope.
	SaveEpisode(ctx context.Context, ep Episode) error
	// GetEpisode returns ErrNotFound when the episode is not in scope.
	GetEpisode(ctx context.Context, scope Scope, id string) (Episode, error)
	// SaveCapture writes, in one transaction, the episode and its traces:
	// traces are upserted by step key, traces of steps that no longer exist
	// are removed, and the episode's trace ids are set. Capturing the same
	// episode twice leaves the same rows. ErrConflict when the episode id
	// belongs to another scope.
	SaveCapture(ctx context.Context, ep Episode, traces []Trace) error
	// GetTrace returns ErrNotFound when the trace is not in scope.
	GetTrace(ctx context.Context, scope Scope, id string) (Trace, error)
	// ListTraces returns traces in step order (by episode, then step).
	ListTraces(ctx context.Context, scope Scope, f TraceFilter) ([]Trace, error)
}

// TraceFilter selects traces. Zero fields do not filter; Limit 0 means 100,
// a negative Limit (NoLimit) no limit.
type TraceFilter struct {
	EpisodeID string
	SessionID string
	// Workspace, when set, keeps the records of that workspace only; ""
	// keeps every workspace of the scope (unless IncludeGlobal).
	Workspace string
	// IncludeGlobal keeps the records of Workspace and the workspace-less
	// ones (persona, global instructions), what a session in Workspace
	// sees: dedup candidates and recall. With Workspace "" it keeps the
	// workspace-less records only.
	IncludeGlobal bool
	Limit         int
}

// MemoryFilter selects memories. Zero fields do not filter; Limit 0 means
// 100, a negative Limit (NoLimit) no limit. Without AllVersions only live
// memories are selected (neither superseded nor forgotten).
type MemoryFilter struct {
	SessionID string
	Type      MemoryType
	// Workspace, when set, keeps the records of that workspace only; ""
	// keeps every workspace of the scope (unless IncludeGlobal).
	Workspace string
	// IncludeGlobal keeps the records of Workspace and the workspace-less
	// ones (persona, global instructions), what a session in Workspace
	// sees: dedup candidates and recall. With Workspace "" it keeps the
	// workspace-less records only.
	IncludeGlobal bool
	AllVersions   bool
	Limit         int
}

// NoLimit as a filter's Limit lists every record.
const NoLimit = -1

// MemoryStore keeps L1 memories and their version history.
type MemoryStore interface {
	MemoryCurator
	// PutMemory writes m (row, text index, vector) and marks each id in
	// supersede as superseded by m, all in one transaction. It returns
	// ErrConflict when a target is already superseded or not in scope.
	PutMemory(ctx context.Context, m Memory, supersede []string) error
	// GetMemory returns ErrNotFound when the memory is not in scope.
	GetMemory(ctx context.Context, scope Scope, id string) (Memory, error)
	// ListMemories returns memories newest first by UpdatedAt; superseded
	// and forgotten ones only with AllVersions.
	ListMemories(ctx context.Context, scope Scope, f MemoryFilter) ([]Memory, error)
	// FindMemoryByHash returns the live memories of the scope whose
	// ContentHash is hash (an indexed lookup).
	FindMemoryByHash(ctx context.Context, scope Scope, hash string) ([]Memory, error)
	// MemoryHistory returns the versions id supersedes, transitively, newest first.
	MemoryHistory(ctx context.Context, scope Scope, id string) ([]Memory, error)
	// CountMemories counts live memories of the scope.
	CountMemories(ctx context.Context, scope Scope) (int, error)
	// HasLiveMemoryHash reports whether a live memory of the scope has
	// ContentHash hash, without reading the memories (the exact-text
	// pre-check of extraction's dedup).
	HasLiveMemoryHash(ctx context.Context, scope Scope, hash string) (bool, error)
}

// CallLog keeps the record of LLM calls.
type CallLog interface {
	CallRecorder
	// LLMUsageByOp sums the calls made since the given time, by op, over
	// every scope: totals for the operator's status and metrics, no
	// record of any scope.
	LLMUsageByOp(ctx context.Context, since time.Time) (map[string]LLMUsage, error)
	// LLMCallsOfScope returns the calls recorded for scope (tenant, user
	// and agent) at or after since, oldest first, with op, outcome, tokens
	// and latency: what an LLM budget of the scope counts and the viewer
	// draws.
	LLMCallsOfScope(ctx context.Context, scope Scope, since time.Time) ([]LLMCall, error)
}

// Store is everything a backend provides. SQLite and PostgreSQL implement
// it and pass the same storetest suite. Every read takes a scope and never
// returns another scope's records. The optional capabilities a backend may
// add are listed in capability.go.
type Store interface {
	MessageStore
	SessionStore
	EpisodeStore
	MemoryStore
	Searcher
	CallLog
	EmbedRetryStore
	TotalsCounter
	// Ping checks that the store is reachable and migrated.
	Ping(ctx context.Context) error
	Close() error
}
