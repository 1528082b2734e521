// Package wire reads imprint's native JSON formats (docs/CONTRACTS.md §4.1
// episodes, §4.2 messages): one object, a JSON array or JSONL, with every
// error of kind imprint.ErrInvalid naming the field ("episodes[2].turns[0].role:
// unknown role"). The HTTP API reads request bodies with it and the importer
// reads files with it, so both accept exactly the same documents. It also
// holds the input-hygiene checks (text, ids, line length) every reader of
// outside input shares.
package wire
