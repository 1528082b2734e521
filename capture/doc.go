// Package capture turns a closed agent episode into L1 traces, one per
// decision step (seed 000): steps are extracted from the turns, normalized
// (clamped, deduplicated), given a reflection (adapter-native, extracted from
// the agent's text, or synthesized by an LLM when enabled), weighted by a
// reflection quality α (per step, or in one batched LLM call per episode),
// embedded, and saved in one store transaction.
//
// Run is the one entry point; Attach runs it for every episode the session
// bus announces as closed. Only a store failure is an error: LLM and
// embedding failures degrade to neutral scores or missing vectors and are
// reported as warnings in the Result.
package capture
