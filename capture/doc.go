// Package capture turns a closed agent episode into L1 traces, one per
// decision step (seed 000): steps are extracted from the turns, normalized
// (clamped, deduplicated), given a reflection (adapter-native, extracted from
// the agent's text, or synthesized by an LLM when enabled), weighted by a
// reflection quality α (per step, or in one batched LLM call per episode),
// embedded, and saved in one store transaction.
//
// Each stage of the seed's data flow has its file: the step extractor in
// steps.go, the normalizer in normalize.go, the reflection extractor in
// reflection.go, reflection synthesis in synth.go, the α scorer in
// alpha.go (its batched variant in batch.go, the choice between them in
// score.go), the embedder in embed.go; runner.go prepares the episode
// (imprint.PrepareEpisode) and saves the traces.
//
// Run is the one entry point; the durable capture job (ingest) runs it for
// every episode announced as closed. Only a store failure is an error: LLM and embedding failures
// degrade to neutral scores or missing vectors and are reported as
// warnings in the Result.
package capture
