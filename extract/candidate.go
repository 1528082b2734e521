package extract

import imprint "github.com/imprint-dev/imprint"

// Candidate is one memory proposed by an extractor (the LLM or the
// rule-based one, extract/heuristic) before validation, capping and dedup.
type Candidate = imprint.Candidate
