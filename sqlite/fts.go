package sqlite

import (
	"context"
	"database/sql"
)

// ftsWriter keeps the two full-text indexes of one kind (words and
// trigram) in step with its rows inside a write transaction.
type ftsWriter struct {
	insTri, insWords, delTri, delWords *sql.Stmt
}

func newFTSWriter(ctx context.Context, tx *sql.Tx, kind string) (*ftsWriter, error) {
	w := &ftsWriter{}
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = tx.PrepareContext(ctx, q)
		return st
	}
	w.insTri = prep(`INSERT INTO ` + kind + `_fts (rowid, text) VALUES (?, ?)`)
	w.insWords = prep(`INSERT INTO ` + kind + `_words (rowid, text) VALUES (?, ?)`)
	w.delTri = prep(`DELETE FROM ` + kind + `_fts WHERE rowid = ?`)
	w.delWords = prep(`DELETE FROM ` + kind + `_words WHERE rowid = ?`)
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
