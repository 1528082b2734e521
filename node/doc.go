// Package node builds an imprint node from its configuration: it opens the
// store the configuration names (the data dir's SQLite file or a
// PostgreSQL database), builds the LLM client with its budget and call
// log, the embedder, the pipelines over them (capture, extraction,
// recording, search, memory management), the durable-job engine, and the
// whole of imprint serve (session manager, HTTP API, MCP server, viewer,
// job handlers, planner). It also chooses where a command's work runs: on
// the data dir itself, or through the HTTP API of a running imprint serve
// (one named by --server, or the one holding the data dir).
//
// It is wiring, like cmd/imprint and eval: it may import every package,
// and holds construction only. The logic it wires is the libraries'
// (ingest, curate, capture, extract, search, …); flags, help and printing
// stay in cmd/imprint. Tests and other binaries build a node the same way
// the CLI does.
package node
