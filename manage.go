package imprint

import (
	"context"
	"time"
)

// ExtractorManual is the Extractor of a memory added by hand (imprint
// remember, POST /v1/memories, the MCP remember tool) or edited by hand
// (a version written by Memories.Edit).
const ExtractorManual = "manual"

// Ops of the records log (CONTRACTS §6) written by memory management,
// besides extraction's store, update, merge, supersede and withdraw.
const (
	// OpLineForget retires the line's memory: a replay keeps it, retired.
	OpLineForget = "forget"
)

// Actions a remember can take, as RememberResult.Action.
const (
	// RememberStored: a new memory was stored.
	RememberStored = "store"
	// RememberDuplicate: a live memory of the scope already says the
	// same (the exact-text pre-check or the dedup judge); it is returned
	// and nothing was written.
	RememberDuplicate = "skip"
	// RememberUpdated: the dedup judge replaced live memories with the
	// new one, which supersedes them.
	RememberUpdated = "update"
	// RememberMerged: the dedup judge merged the new text with live
	// memories into the returned version, which supersedes them.
	RememberMerged = "merge"
)

// RememberRequest is a memory added by hand.
type RememberRequest struct {
	Scope Scope
	// Content is the memory's text; it is cleaned (CleanText) and redacted
	// before anything is written. Empty after cleaning is ErrInvalid.
	Content string
	// Type is the memory's type; empty infers it from the text (the
	// extraction model when one is configured, else the heuristic rules;
	// a text they give no type is episodic).
	Type MemoryType
	// Workspace, when set, keeps the memory in that workspace (a project);
	// empty makes it workspace-less, recalled in every workspace.
	Workspace string
	// SessionID optionally names the session the memory belongs to;
	// empty leaves it with none.
	SessionID string
	// Priority overrides the type's default priority when not nil.
	Priority *int
}

// RememberResult is what a remember did: Memory is the memory that now
// holds the fact (the new one, or the live duplicate when Action is
// RememberDuplicate).
type RememberResult struct {
	Memory Memory `json:"memory"`
	Action string `json:"action"`
}

// EditRequest is a correction of a memory by hand.
type EditRequest struct {
	Scope Scope
	// ID is the live memory to correct. A superseded or forgotten one is
	// ErrConflict (the error names the live version when there is one).
	ID string
	// Content is the corrected text, cleaned and redacted like a
	// remember's; empty is ErrInvalid.
	Content string
	// Type changes the memory's type when set; empty keeps it.
	Type MemoryType
}

// MemoryDetail is a memory with its history and its sources: what
// `imprint memories show` and GET /v1/memories/{id} return.
type MemoryDetail struct {
	Memory
	// History are the versions Memory supersedes, transitively, newest
	// first (forgotten versions included).
	History []Memory `json:"history"`
	// Sources are the L0 messages of Memory.SourceMessageIDs that the
	// store still holds (purged ones are left out), in the ids' order.
	Sources []Message `json:"sources"`
}

// PurgeOptions tune a purge.
type PurgeOptions struct {
	// WithSources also purges the source messages of every purged
	// version (store, indexes, vectors, conversations shards).
	WithSources bool
}

// PurgeResult lists what a purge removed.
type PurgeResult struct {
	// MemoryIDs are the purged memory versions (the id's whole version
	// chain: what it supersedes and what supersedes it).
	MemoryIDs []string `json:"memory_ids"`
	// MessageIDs are the purged source messages (WithSources only).
	MessageIDs []string `json:"message_ids"`
	// ShardLines is how many lines were removed from the JSONL shards.
	ShardLines int `json:"shard_lines"`
}

// ForgetFilter selects the live memories a bulk forget retires. At least
// one field must be set (ErrInvalid otherwise); set fields combine.
type ForgetFilter struct {
	// SessionID selects the memories of one session.
	SessionID string
	// Before selects the memories last updated before it.
	Before time.Time
	// DryRun counts the memories the filter selects and forgets none.
	DryRun bool
}

// Memories is memory management by hand: what `imprint remember`,
// `imprint memories show|edit|forget`, `imprint forget`, the HTTP API
// (POST, PATCH and DELETE /v1/memories), the MCP tools and the viewer call.
// The binary injects the curate package's implementation, as it injects
// Search and Recall. Every method takes a scope and never touches another
// scope's records; a memory of another scope is ErrNotFound. Every change
// is also written to the records log (CONTRACTS §6) before the store, so
// a rebuild from the shards gives the same live set.
type Memories interface {
	// Remember adds a memory by hand, deduplicated like extracted ones
	// (the exact-text pre-check, then the dedup judge when a model is
	// configured) and marked with Extractor ExtractorManual. ErrInvalid
	// for empty content, an unknown type or an invalid scope; an
	// instruction that asks for something harmful (promptguard) is
	// ErrInvalid and nothing is stored.
	Remember(ctx context.Context, r RememberRequest) (RememberResult, error)
	// Show returns the memory (live, superseded or forgotten) with its
	// history and sources. ErrNotFound when the id is not in scope.
	Show(ctx context.Context, scope Scope, id string) (MemoryDetail, error)
	// Edit writes a new version of a live memory with the corrected
	// text, superseding it, and returns the new version (Extractor
	// ExtractorManual; sources, session and workspace kept). ErrNotFound,
	// ErrConflict (not live), ErrInvalid (empty text, unknown type).
	Edit(ctx context.Context, r EditRequest) (Memory, error)
	// Forget retires a live memory: it stays readable by id and in its
	// successors' history, marked with ForgottenAt, but is no longer
	// listed (without all versions), searched, recalled or a dedup
	// candidate; the records log gets a forget line. Forgetting a
	// forgotten memory returns it unchanged. ErrNotFound; ErrConflict for
	// a superseded memory (forget its live version).
	Forget(ctx context.Context, scope Scope, id string) (Memory, error)
	// Purge removes the memory and all its versions everywhere: the store
	// rows, the keyword index, the vectors and their lines in the JSONL
	// shards (rewritten atomically); with WithSources their source
	// messages too. Nothing of them can be found or rebuilt afterwards.
	// ErrNotFound when the id is not in scope.
	Purge(ctx context.Context, scope Scope, id string, o PurgeOptions) (PurgeResult, error)
	// ForgetMany retires every live memory of the scope that f selects,
	// as Forget does, and returns how many it retired (with f.DryRun, how
	// many it would retire, changing nothing). ErrInvalid for an empty
	// filter.
	ForgetMany(ctx context.Context, scope Scope, f ForgetFilter) (int, error)
}

// MemoryCurator is the store side of memory management; MemoryStore embeds
// it, so every backend implements it and storetest checks it. Every method
// validates the scope (ErrInvalid) and touches no other scope's records.
type MemoryCurator interface {
	// RetireMemory marks the live memory id forgotten at at and returns
	// it: from then on it is left out of ListMemories (but with
	// AllVersions), SearchText, SearchVector, FindMemoryByHash,
	// HasLiveMemoryHash and CountMemories, while GetMemory and
	// MemoryHistory still return it, with ForgottenAt set. Retiring a
	// forgotten memory returns it unchanged. ErrNotFound when id is not in
	// scope; ErrConflict when it is superseded.
	RetireMemory(ctx context.Context, scope Scope, id string, at time.Time) (Memory, error)
	// PurgeMemories deletes the memories ids of scope (their rows,
	// keyword index entries and vectors; with secure_delete where the
	// backend has it) in one transaction. Other memories are left as they
	// are: the caller purges whole version chains. Ids not in scope are
	// ignored; it returns the ids deleted, in the order given.
	PurgeMemories(ctx context.Context, scope Scope, ids []string) ([]string, error)
	// PurgeMessages deletes the messages ids of the scope's session (rows,
	// keyword index entries, vectors) in one transaction; ids not in the
	// session are ignored. It returns the ids deleted, in the order given.
	// The session's cursor and counts are left as they are.
	PurgeMessages(ctx context.Context, scope Scope, sessionID string, ids []string) ([]string, error)
}

// LogRewriter is a RecordLog whose lines can be removed: what a purge
// does to the JSONL shards (shard.Writer). It is safe for concurrent use
// with the log's Append in the same process; another process appending to
// the same folder meanwhile may lose its lines, which is why the CLI purges
// through a running service.
type LogRewriter interface {
	// SupportsRewrite reports whether Rewrite works on this log.
	SupportsRewrite() bool
	// Rewrite keeps, in every day file of the log, the lines keep accepts,
	// replacing each file that loses a line atomically (a new file synced
	// and renamed over it, then the folder synced), and returns how many
	// lines it removed. Appends wait while it runs.
	Rewrite(keep func(line []byte) bool) (int, error)
}
