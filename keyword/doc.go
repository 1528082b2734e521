// Package keyword holds what every store's keyword index and keyword query
// share, so that SQLite and any other backend rank the same text the same
// way: the English stop words a query drops, and the context a message is
// indexed with (its speaker, the absolute dates it is about, the turn it
// answers).
package keyword
