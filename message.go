package imprint

// Message is one L0 message: user or assistant text, verbatim after
// sanitizing and redaction. Messages are immutable; memories point back to
// them as provenance.
type Message struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	Scope     Scope  `json:"scope"`
	// Workspace is the project the record belongs to ("" for none): an
	// attribute and a filter, not part of its identity.
	Workspace  string `json:"workspace,omitempty"`
	Role       Role   `json:"role"`
	Content    string `json:"content"`
	Timestamp  Time   `json:"timestamp"`
	RecordedAt Time   `json:"recorded_at"`
	// Seq is the store's insertion order, unique per store and increasing;
	// extraction cursors are positions in it.
	Seq int64 `json:"-"`
	// Speaker is the name of the person who said it, where the source has
	// one (LoCoMo's speakers, §4.2 "speaker"); extraction names the
	// subject of a memory by it.
	Speaker string `json:"speaker,omitempty"`
	// Vec is the message's embedding, made by Embedder ("hash/384").
	Vec      []float32 `json:"-"`
	Embedder string    `json:"-"`
}

// SessionCursor is where a session's extraction stood, by message id: the
// last message it consumed. A rebuild (imprint rebuild) reads them from
// the old database and puts each session's cursor back on its message.
type SessionCursor struct {
	Scope     Scope
	SessionID string
	// MessageID is the last message extraction consumed.
	MessageID string
}

// Session is one long-lived conversation of an agent with a user, with its
// extraction bookkeeping.
type Session struct {
	ID    string `json:"session_id"`
	Scope Scope  `json:"scope"`
	// Workspace is the project of the session ("" for none), set by its
	// first messages that name one; memories extracted from the session
	// keep it.
	Workspace string `json:"workspace,omitempty"`
	// Cursor is the Seq of the last message consumed by a successful
	// extraction window; messages after it are pending.
	Cursor int64 `json:"-"`
	// LastSceneName is passed to the next extraction window for continuity.
	LastSceneName string `json:"last_scene_name"`
	// RoundsSinceExtraction counts user messages recorded since the last
	// successful extraction.
	RoundsSinceExtraction int `json:"rounds_since_extraction"`
	// ExtractionDue is set durably when the session should be extracted.
	ExtractionDue bool `json:"extraction_due"`
	// BetweenPeople marks a conversation between two people (LoCoMo, or
	// any import where both sides are people) rather than between a user
	// and an AI assistant. The roles keep their places (the first speaker
	// is the user), but extraction reads both sides, attributes each fact
	// to its speaker and finds no instruction to an assistant. Set when
	// messages are recorded with it, never cleared.
	BetweenPeople   bool `json:"between_people"`
	LastExtractedAt Time `json:"last_extracted_at"`
	CreatedAt       Time `json:"created_at"`
	UpdatedAt       Time `json:"updated_at"`
}
