package imprint

import (
	"context"
	"strings"
)

// DefaultSearchLimit is the number of hits a search returns when its query
// names none.
const DefaultSearchLimit = 10

// DefaultRecallBudget is the token budget of a recall that names none.
const DefaultRecallBudget = 800

// SearchQuery is one hybrid search.
type SearchQuery struct {
	Scope Scope
	Text  string
	// Kinds to search; empty means memories, traces and messages.
	Kinds     []Kind
	SessionID string
	// Workspace, when set, narrows the search to that workspace's
	// records; "" searches every workspace of the scope.
	Workspace string
	Limit     int
}

// ParseKind turns the CLI/HTTP kind value (memory, trace, message, all or
// empty) into the kinds to search. It returns ErrInvalid for anything else.
func ParseKind(s string) ([]Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "all":
		return []Kind{KindMemory, KindTrace, KindMessage}, nil
	case "memory", "memories":
		return []Kind{KindMemory}, nil
	case "trace", "traces":
		return []Kind{KindTrace}, nil
	case "message", "messages":
		return []Kind{KindMessage}, nil
	}
	return nil, Invalidf("kind %q: want memory, trace, message or all", s)
}

// Search is hybrid search (search.Searcher): keyword and vector rankings
// fused. The HTTP API searches through it, so it imports no pipeline.
type Search interface {
	// Search returns up to q.Limit hits, best first. It returns ErrInvalid
	// for an empty query or an invalid scope; store errors are wrapped.
	Search(ctx context.Context, q SearchQuery) ([]Hit, error)
}

// RecallQuery asks for the context an agent injects before answering.
type RecallQuery struct {
	Scope Scope
	// Text is what the agent is about to answer; empty recalls the
	// standing instructions only.
	Text string
	// SessionID is the session the agent is in, when known: its traces
	// rank before equally relevant ones of earlier sessions. Memories and
	// traces are always recalled scope-wide.
	SessionID string
	// Workspace is the project the agent works in, when known: only its
	// records and workspace-less ones (persona, global instructions) are
	// recalled, its own first among equally relevant ones. "" recalls
	// every workspace of the scope.
	Workspace string
	// BudgetTokens bounds the context block, counted with
	// EstimateTokens; zero or less means DefaultRecallBudget.
	BudgetTokens int
	// Persona adds the user's live persona memories right after the
	// standing instructions, whatever Text matches: the block a session
	// starts with (Claude Code's SessionStart hook).
	Persona bool
}

// RecallResult is a recall: the context block and the records in it, in
// the order they appear. Standing instructions come first with score 0
// (they are included by rule, not ranked).
type RecallResult struct {
	Context string `json:"context"`
	Hits    []Hit  `json:"hits"`
}

// Recall builds the recall context block (search.Recaller). The HTTP API
// recalls through it, so it imports no pipeline.
type Recall interface {
	// Recall returns the context block for q. It returns ErrInvalid for an
	// invalid scope; store and search errors are wrapped.
	Recall(ctx context.Context, q RecallQuery) (RecallResult, error)
}
