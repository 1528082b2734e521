package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// ftsWriter keeps the two full-text indexes of one kind (words and
// trigram) in step with its rows inside a write transaction. exec runs the
// i-th statement of the kind's ftsSQL entry in that transaction.
type ftsWriter struct {
	exec  func(i int, args ...any) error
	close func()
}

// The statements of an ftsSQL entry, in order.
const (
	ftsInsTri = iota
	ftsInsWords
	ftsDelTri
	ftsDelWords
)

// ftsSQL are the statements of an ftsWriter for each kind. Those of traces
// and messages are prepared once on the writer connection; memories are
// written on the raw path (rawtx.go), which prepares its own.
var ftsSQL = func() map[string][4]string {
	m := map[string][4]string{}
	for _, kind := range []string{"memory", "trace", "message"} {
		reg := wsql
		if kind == "memory" {
			reg = func(q string) string { return q }
		}
		words := `INSERT INTO ` + kind + `_words (rowid, text) VALUES (?, ?)`
		if kind == "message" {
			words = `INSERT INTO message_words (rowid, text, date, who) VALUES (?, ?, ?, ?)`
		}
		m[kind] = [4]string{
			reg(`INSERT INTO ` + kind + `_fts (rowid, text) VALUES (?, ?)`),
			reg(words),
			reg(`DELETE FROM ` + kind + `_fts WHERE rowid = ?`),
			reg(`DELETE FROM ` + kind + `_words WHERE rowid = ?`),
		}
	}
	return m
}()

// newFTSWriter returns the kind's writer in tx, its statements bound to tx
// once; close them with close.
func (db *DB) newFTSWriter(ctx context.Context, tx *sql.Tx, kind string) (*ftsWriter, error) {
	qs, ok := ftsSQL[kind]
	if !ok {
		return nil, fmt.Errorf("no keyword index for %q", kind)
	}
	var sts [4]*sql.Stmt
	closeAll := func() {
		for _, st := range sts {
			if st != nil {
				st.Close()
			}
		}
	}
	for i, q := range qs {
		st, err := db.stmt(ctx, tx, q)
		if err != nil {
			closeAll()
			return nil, err
		}
		sts[i] = st
	}
	return &ftsWriter{
		exec: func(i int, args ...any) error {
			_, err := sts[i].ExecContext(ctx, args...)
			return err
		},
		close: closeAll,
	}, nil
}

// rawFTSWriter returns the kind's writer in a raw transaction.
func rawFTSWriter(tx *rawTx, kind string) *ftsWriter {
	qs := ftsSQL[kind]
	return &ftsWriter{
		exec: func(i int, args ...any) error {
			_, err := tx.exec(qs[i], args...)
			return err
		},
		close: func() {},
	}
}

// insertMessage indexes a message under its seq: its own words, and apart
// from them its dates and speaker (see messageDoc).
func (w *ftsWriter) insertMessage(seq int64, d messageDoc) error {
	words, cjk := indexTexts(d.text)
	who, _ := indexTexts(d.who)
	if err := w.exec(ftsInsWords, seq, words, d.date, who); err != nil {
		return err
	}
	if cjk != "" {
		return w.exec(ftsInsTri, seq, cjk)
	}
	return nil
}

// insert indexes text under rowid. Each index gets a row only when it has
// something to hold, which keeps the trigram index small for Latin text.
func (w *ftsWriter) insert(rowid int64, text string) error {
	words, cjk := indexTexts(text)
	if words != "" {
		if err := w.exec(ftsInsWords, rowid, words); err != nil {
			return err
		}
	}
	if cjk != "" {
		if err := w.exec(ftsInsTri, rowid, cjk); err != nil {
			return err
		}
	}
	return nil
}

// remove drops rowid from both indexes (a missing row is not an error).
func (w *ftsWriter) remove(rowid int64) error {
	if err := w.exec(ftsDelTri, rowid); err != nil {
		return err
	}
	return w.exec(ftsDelWords, rowid)
}

// replace re-indexes rowid with text.
func (w *ftsWriter) replace(rowid int64, text string) error {
	if err := w.remove(rowid); err != nil {
		return err
	}
	return w.insert(rowid, text)
}
