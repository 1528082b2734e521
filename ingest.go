package imprint

import "context"

// Recorded is what one recording of a session's messages did, as far as
// the work it makes due is concerned.
type Recorded struct {
	SessionID string
	// Messages is how many messages were recorded; Unembedded how many of
	// them were stored without a vector.
	Messages, Unembedded int
	// ExtractionDue is set when the session reached
	// extraction.every_n_rounds with this recording.
	ExtractionDue bool
}

// Ingest queues the background work that recording messages makes due. The
// HTTP API and the MCP server call it after they recorded messages or
// turns; the binary injects the ingest package's implementation.
type Ingest interface {
	// MessagesRecorded queues the session's extraction when it became
	// due, joining one already queued, and the scope's embedding retry when
	// messages were stored without a vector. A failed enqueue is logged,
	// not returned: the messages are stored either way, and the planner
	// finds a due session later.
	MessagesRecorded(ctx context.Context, scope Scope, r Recorded)
	// ExtractSession queues the extraction of the session's pending
	// messages now, joining one already queued. Errors are the job
	// queue's (ErrUnavailable when it cannot be reached).
	ExtractSession(ctx context.Context, scope Scope, sessionID string) error
}
