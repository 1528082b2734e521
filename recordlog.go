package imprint

import "time"

// LogReader reads an append-only log of JSON lines, oldest first. A line
// fn rejects stops the read with an error naming where the line is.
type LogReader interface {
	Read(fn func(line []byte) error) error
}

// RecordLog is an append-only log of JSON lines kept in day files
// (docs/CONTRACTS.md: conversations/ and records/YYYY-MM-DD.jsonl): the L0
// conversations, and every change to an L1 memory, so that the store can
// be rebuilt from files. It is safe for concurrent use.
type RecordLog interface {
	LogReader
	// Append writes each value as one JSON line to the file of its day,
	// day(i) for the i-th value; the lines are durable when it returns.
	Append(values []any, day func(i int) time.Time) error
	// Journal returns the log's journal of work in flight.
	Journal() Journal
}

// JournalEntry is one entry of a Journal.
type JournalEntry struct {
	// ID names the entry for End; it is the journal's own.
	ID string
	// Name is the name the entry was begun with.
	Name string
	Data []byte
}

// Journal keeps, beside a log, what work in flight is about to log, so
// that after a crash the work's lines can be told from lines of work that
// completed. An entry is durable when Begin returns. It is safe for
// concurrent use.
type Journal interface {
	// Begin durably writes an entry named name (a safe file-name part
	// without '-') holding data.
	Begin(name string, data []byte) (JournalEntry, error)
	// End ends an entry begun in this process: removed when remove is
	// set, else left for Recover.
	End(e JournalEntry, remove bool) error
	// Recover calls fn, one entry at a time, with each entry whose name
	// match accepts that no work in flight in this process holds, and
	// removes those fn reports done.
	Recover(match func(name string) bool, fn func(e JournalEntry) (done bool, err error)) error
}
