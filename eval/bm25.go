package eval

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode"

	imprint "github.com/imprint-dev/imprint"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// BM25 is the baseline: the raw turns in an in-memory SQLite FTS5 table
// (porter unicode61, the tokenizer of imprint's own word index), queried
// with the question's words minus English stop words, each quoted, OR-ed,
// ranked by bm25. It knows nothing of speakers, dates or neighbouring
// turns. Close releases it.
type BM25 struct {
	db  *sql.DB
	ids []string // rowid-1 → message id
}

// NewBM25 indexes the content of msgs (as the importer produced it: the
// turn's text, and a shared photo's caption) in a fresh in-memory table.
// Errors are ErrUnavailable when SQLite cannot be opened.
func NewBM25(ctx context.Context, msgs []imprint.Message) (*BM25, error) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, fmt.Errorf("bm25 baseline: %w: %v", imprint.ErrUnavailable, err)
	}
	// Every connection to :memory: is its own database: keep one.
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	b := &BM25{db: db}
	if err := b.load(ctx, msgs); err != nil {
		db.Close()
		return nil, err
	}
	return b, nil
}

func (b *BM25) load(ctx context.Context, msgs []imprint.Message) error {
	if _, err := b.db.ExecContext(ctx, `CREATE VIRTUAL TABLE turns USING fts5 (text, tokenize = 'porter unicode61')`); err != nil {
		return fmt.Errorf("bm25 baseline: create table: %w: %v", imprint.ErrUnavailable, err)
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("bm25 baseline: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO turns (rowid, text) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("bm25 baseline: %w", err)
	}
	defer stmt.Close()
	for _, m := range msgs {
		b.ids = append(b.ids, m.ID)
		if _, err := stmt.ExecContext(ctx, len(b.ids), m.Content); err != nil {
			return fmt.Errorf("bm25 baseline: index %s: %w", m.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("bm25 baseline: %w", err)
	}
	return nil
}

// Search returns the ids of the limit best-ranked turns for question, as
// message hits, best first (ties by insertion order). A question with no
// word left after the stop words finds nothing.
func (b *BM25) Search(ctx context.Context, question string, limit int) ([]imprint.Hit, error) {
	q := BM25Query(question)
	if q == "" {
		return nil, nil
	}
	rows, err := b.db.QueryContext(ctx, `SELECT rowid, bm25(turns) FROM turns WHERE turns MATCH ? ORDER BY bm25(turns), rowid LIMIT ?`, q, limit)
	if err != nil {
		return nil, fmt.Errorf("bm25 baseline: search %q: %w", q, err)
	}
	defer rows.Close()
	var hits []imprint.Hit
	for rows.Next() {
		var rowid int
		var score float64
		if err := rows.Scan(&rowid, &score); err != nil {
			return nil, fmt.Errorf("bm25 baseline: %w", err)
		}
		// FTS5's bm25 is negative, lower is better.
		hits = append(hits, imprint.Hit{Kind: imprint.KindMessage, ID: b.ids[rowid-1], Score: -score})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("bm25 baseline: %w", err)
	}
	return hits, nil
}

// Close releases the in-memory database.
func (b *BM25) Close() error { return b.db.Close() }

// BM25Query is the baseline's FTS5 query for question: its words (runs of
// letters and digits, lower-cased), without stop words and repeats, each
// quoted, joined by OR; "" when no word is left.
func BM25Query(question string) string {
	words := strings.FieldsFunc(strings.ToLower(question), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	seen := map[string]bool{}
	var terms []string
	for _, w := range words {
		if stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, `"`+w+`"`)
	}
	return strings.Join(terms, " OR ")
}

// stopWords are the English words the baseline drops from a question:
// question words, pronouns, articles, auxiliaries, prepositions and the
// pieces a contraction splits into ("caroline's" → "caroline", "s"). The
// baseline keeps its own short list, so a change to imprint's query
// handling cannot move the yardstick.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an the and or but if then so than as of at by for from in into on onto to with without about
		over under after before during between through up down out off again further
		what which who whom whose when where why how
		is am are was were be been being do does did doing done have has had having
		will would shall should can could may might must
		i me my mine myself we us our ours ourselves you your yours yourself yourselves
		he him his himself she her hers herself it its itself they them their theirs themselves
		this that these those there here
		not no nor only own same too very just also any all both each few more most other some such
		s t d ll m re ve
	`) {
		m[w] = true
	}
	return m
}()
