// Package extract is the L1 memory extraction pipeline (seed 004): a quality
// gate, the split of pending messages into windows, one LLM call that
// segments scenes and extracts typed memories (or a heuristic extractor when
// no LLM is configured), conflict detection against stored memories, and the
// application of store/update/merge/skip decisions. A session marked as a
// conversation between people (imprint.Session.BetweenPeople) has both
// sides extracted, each memory naming its speaker, and no instructions.
package extract
