package imprint

// MemoryType is the kind of an extracted memory.
type MemoryType string

// The three memory types.
const (
	// MemoryPersona is a stable attribute or preference of the user.
	MemoryPersona MemoryType = "persona"
	// MemoryEpisodic is an objective event, decision or plan.
	MemoryEpisodic MemoryType = "episodic"
	// MemoryInstruction is a long-term rule the user sets for the agent.
	MemoryInstruction MemoryType = "instruction"
)

// Valid reports whether t is one of the three memory types.
func (t MemoryType) Valid() bool {
	return t == MemoryPersona || t == MemoryEpisodic || t == MemoryInstruction
}

// PriorityFloor is the lowest priority kept for t: persona 50, episodic 60,
// instruction 70 (instruction −1, "absolute rule", is kept as well).
func (t MemoryType) PriorityFloor() int {
	switch t {
	case MemoryPersona:
		return 50
	case MemoryEpisodic:
		return 60
	case MemoryInstruction:
		return 70
	}
	return 0
}

// Extractors that produce memories.
const (
	ExtractorLLM       = "llm"
	ExtractorHeuristic = "heuristic"
)

// MemoryMetadata holds the type-specific fields of a memory.
type MemoryMetadata struct {
	ActivityStartTime string `json:"activity_start_time,omitempty"`
	ActivityEndTime   string `json:"activity_end_time,omitempty"`
}

// Memory is one extracted L1 fact. Updates never overwrite: a new version
// supersedes the old ones, which keep their rows with SupersededBy set.
type Memory struct {
	ID               string         `json:"id"`
	Content          string         `json:"content"`
	Type             MemoryType     `json:"type"`
	Priority         int            `json:"priority"`
	SceneName        string         `json:"scene_name"`
	SourceMessageIDs []string       `json:"source_message_ids"`
	Metadata         MemoryMetadata `json:"metadata"`
	Timestamps       []Time         `json:"timestamps"`
	CreatedAt        Time           `json:"created_at"`
	UpdatedAt        Time           `json:"updated_at"`
	Version          int            `json:"version"`
	SessionID        string         `json:"session_id"`
	Scope            Scope          `json:"scope"`
	// Workspace is the project the memory holds for ("" for every project:
	// persona, global instructions), the workspace of the session it was
	// extracted from.
	Workspace    string   `json:"workspace,omitempty"`
	SupersededBy *string  `json:"superseded_by"`
	Supersedes   []string `json:"supersedes"`
	Extractor    string   `json:"extractor"`
	Embedder     string   `json:"embedder"`
	// ForgottenAt is when the memory was retired by hand (Memories.Forget):
	// kept, but no longer listed, searched, recalled or deduplicated
	// against. Nil (and left out of JSON) for a memory that was not.
	ForgottenAt *Time `json:"forgotten_at,omitempty"`
	// ContentHash is the hash of the normalized content, used by the
	// deterministic dedup pre-check.
	ContentHash string `json:"-"`
	// Vec is the content's embedding made by Embedder.
	Vec []float32 `json:"-"`
}
