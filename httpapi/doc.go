// Package httpapi is imprint's HTTP JSON API (CONTRACTS.md §7) on the
// standard ServeMux, and a Go client for it that returns the same Go types
// and error kinds as the library, so the CLI behaves the same in --server
// mode. The server records L0 messages, accepts episodes and live session
// turns, serves reads, hybrid search and recall, status, Prometheus metrics,
// server-sent events and a small HTML status page, all scoped by tenant,
// user and agent.
package httpapi
