package imprint

// Candidate is one memory an extractor proposes (the LLM, or the
// rule-based one in extract/heuristic) before validation, capping and
// dedup decide whether and how it is stored.
type Candidate struct {
	Content          string
	Type             MemoryType
	Priority         int
	SceneName        string
	SourceMessageIDs []string
	Metadata         MemoryMetadata
}
