// Package clitext writes imprint's human output: the aligned listings of
// traces, memories, search hits and API keys, and the small text helpers
// (one-line cuts, times, the version line) the CLI prints when --json is
// not given. Results of a pipeline print themselves (capture.Result,
// record.Result, extract.Result, ingest.Summary have WriteText); this
// package holds what is written about the root package's records, so that
// cmd/imprint only chooses between it and JSON.
package clitext
