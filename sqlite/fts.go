package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// ftsWriter keeps the two full-text indexes of one kind (words and
// trigram) in step with its rows inside a write transaction.
type ftsWriter struct {
	insTri, insWords, delTri, delWords *sql.Stmt
}

// ftsSQL are the statements of an ftsWriter for each kind, prepared once
// on the writer connection.
var ftsSQL = func() map[string][4]string {
	m := map[string][4]string{}
	for _, kind := range []string{"memory", "trace", "message"} {
		m[kind] = [4]string{
			wsql(`INSERT INTO ` + kind + `_fts (rowid, text) VALUES (?, ?)`),
			wsql(`INSERT INTO ` + kind + `_words (rowid, text) VALUES (?, ?)`),
			wsql(`DELETE FROM ` + kind + `_fts WHERE rowid = ?`),
			wsql(`DELETE FROM ` + kind + `_words WHERE rowid = ?`),
		}
	}
	return m
}()

func (db *DB) newFTSWriter(ctx context.Context, tx *sql.Tx, kind string) (*ftsWriter, error) {
	w := &ftsWriter{}
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = db.stmt(ctx, tx, q)
		return st
	}
	qs, ok := ftsSQL[kind]
	if !ok {
		return nil, fmt.Errorf("no keyword index for %q", kind)
	}
	w.insTri = prep(qs[0])
	w.insWords = prep(qs[1])
	w.delTri = prep(qs[2])
	w.delWords = prep(qs[3])
	if err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *ftsWriter) close() {
	for _, st := range []*sql.Stmt{w.insTri, w.insWords, w.delTri, w.delWords} {
		if st != nil {
			st.Close()
		}
	}
}

// insert indexes text under rowid. Each index gets a row only when it has
// something to hold, which keeps the trigram index small for Latin text.
func (w *ftsWriter) insert(ctx context.Context, rowid int64, text string) error {
	words, cjk := indexTexts(text)
	if words != "" {
		if _, err := w.insWords.ExecContext(ctx, rowid, words); err != nil {
			return err
		}
	}
	if cjk != "" {
		if _, err := w.insTri.ExecContext(ctx, rowid, cjk); err != nil {
			return err
		}
	}
	return nil
}

// remove drops rowid from both indexes (a missing row is not an error).
func (w *ftsWriter) remove(ctx context.Context, rowid int64) error {
	if _, err := w.delTri.ExecContext(ctx, rowid); err != nil {
		return err
	}
	_, err := w.delWords.ExecContext(ctx, rowid)
	return err
}

// replace re-indexes rowid with text.
func (w *ftsWriter) replace(ctx context.Context, rowid int64, text string) error {
	if err := w.remove(ctx, rowid); err != nil {
		return err
	}
	return w.insert(ctx, rowid, text)
}

// rawFTSInsert indexes text under rowid in a raw transaction; q are the
// kind's statements from ftsSQL (as ftsWriter.insert).
func rawFTSInsert(tx *rawTx, q [4]string, rowid int64, text string) error {
	words, cjk := indexTexts(text)
	if words != "" {
		if _, err := tx.exec(q[1], rowid, words); err != nil {
			return err
		}
	}
	if cjk != "" {
		if _, err := tx.exec(q[0], rowid, cjk); err != nil {
			return err
		}
	}
	return nil
}

// rawFTSRemove drops rowid from both indexes in a raw transaction.
func rawFTSRemove(tx *rawTx, q [4]string, rowid int64) error {
	if _, err := tx.exec(q[2], rowid); err != nil {
		return err
	}
	_, err := tx.exec(q[3], rowid)
	return err
}
