package extract

import imprint "github.com/imprint-dev/imprint"

// Candidate is one memory proposed by an extractor (the LLM or the
// heuristic one) before validation, capping and dedup.
type Candidate struct {
	Content          string
	Type             imprint.MemoryType
	Priority         int
	SceneName        string
	SourceMessageIDs []string
	Metadata         imprint.MemoryMetadata
}
