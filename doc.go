// Package imprint is the domain of the imprint memory capture engine: the
// records it keeps (messages, episodes, traces, memories), the scope every
// record belongs to, the interfaces between the pipelines and the adapters
// (stores, LLM, embedder), and the error kinds shared by all of them.
//
// The package imports only the standard library. Pipelines (capture,
// extract, record, session, search) build on it; adapters (sqlite, llm/*,
// embedding, httpapi, ...) implement its interfaces; package node wires them for cmd/imprint.
package imprint
