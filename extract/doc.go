// Package extract is the L1 memory extraction pipeline (seed 004): a quality
// gate, the split of pending messages into windows, one LLM call that
// segments scenes and extracts typed memories (or the rule-based extractor,
// package extract/heuristic, when no LLM is configured), conflict detection
// against stored memories, and the application of store/update/merge/skip
// decisions. A session marked as a conversation between people
// (imprint.Session.BetweenPeople) has both sides extracted, each memory
// naming its speaker, and no instructions.
//
// Each stage of the seed has its file:
//
//   - quality gate (shouldExtractL1): gate.go, ShouldExtract
//   - new/background split (newMessages, backgroundMessages): window.go,
//     SplitWindow and NextWindow
//   - prompt (formatExtractionPrompt): prompt.go and prompts/
//   - call (the one LLM call): call.go
//   - parse (types, priorities, sources): parse.go
//   - cap (maxMemoriesPerSession, before dedup): cap.go
//   - dedup: the exact-text pre-check and the decisions in dedup.go, the
//     recall tiers (vector, keyword, none) in recall.go, the batch LLM
//     judgment in judge.go
//   - apply (store, update, merge, skip): apply.go
//   - result (L1ExtractionResult, the l1_extraction metric): result.go
//
// runner.go runs them for one window at a time, batch.go for many sessions.
package extract
