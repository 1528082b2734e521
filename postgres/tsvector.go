package postgres

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The keyword index columns hold to_tsvector('imprint', text) of texts the
// keyword package has already split into words separated by single
// spaces. The server's parser never joins characters across a space, so a
// text's tsvector is that of each space-separated chunk in turn, the
// positions of each shifted by the positions of those before it. Stemming
// (the Snowball dictionary) and parsing cost the server about 60 µs per
// short message and 0.4 ms per trace, most of an import's database time,
// while a few thousand distinct words make up a whole import: the store
// asks the server for the tsvector of each chunk it has not seen yet, keeps
// it, and sends the assembled tsvectors as literals. The result is the
// tsvector the server would have computed (TestTSVectorsMatchServer).

// chunkLexemes is the tsvector of one chunk: its lexemes with their
// positions counted from 1, and how many positions the chunk takes.
type chunkLexemes struct {
	lexemes []string
	pos     [][]int
	span    int
}

// lexemeCache maps chunks to their tsvectors, for the life of a DB.
type lexemeCache struct {
	mu     sync.Mutex
	chunks map[string]*chunkLexemes
}

// maxCachedChunks bounds the cache; it starts again empty when full.
const maxCachedChunks = 200_000

// The limits of a tsvector (PostgreSQL's MAXENTRYPOS and MAXNUMPOS): a
// position above maxEntryPos is stored as maxEntryPos, and to_tsvector keeps
// at most maxNumPos-1 positions of a lexeme.
const (
	maxEntryPos = 1<<14 - 1
	maxNumPos   = 256
)

// tsvectors returns for each text the literal of to_tsvector('imprint',
// text), asking q (a connection or the caller's transaction) for the
// chunks not cached yet in one statement.
func (db *DB) tsvectors(ctx context.Context, q querier, texts ...string) ([]string, error) {
	c := &db.lexemes
	var missing []string
	c.mu.Lock()
	if c.chunks == nil {
		c.chunks = map[string]*chunkLexemes{}
	}
	// use holds the tsvector of every chunk of texts.
	use := map[string]*chunkLexemes{}
	for _, t := range texts {
		for _, ch := range strings.Split(t, " ") {
			if _, ok := use[ch]; ok || ch == "" {
				continue
			}
			cl, ok := c.chunks[ch]
			if !ok {
				cl = &chunkLexemes{}
				missing = append(missing, ch)
			}
			use[ch] = cl
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		rows, err := q.Query(ctx, `SELECT w.o, l.lexeme, l.positions
			FROM unnest($1::text[]) WITH ORDINALITY AS w(t, o), unnest(to_tsvector('imprint', w.t)) AS l`, missing)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var o int
			var lex string
			var pos []int16
			if err := rows.Scan(&o, &lex, &pos); err != nil {
				rows.Close()
				return nil, err
			}
			cl := use[missing[o-1]]
			ps := make([]int, len(pos))
			for i, p := range pos {
				ps[i] = int(p)
				cl.span = max(cl.span, int(p))
			}
			cl.lexemes = append(cl.lexemes, lex)
			cl.pos = append(cl.pos, ps)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		c.mu.Lock()
		if len(c.chunks)+len(missing) > maxCachedChunks {
			c.chunks = map[string]*chunkLexemes{}
		}
		for _, ch := range missing {
			c.chunks[ch] = use[ch]
		}
		c.mu.Unlock()
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = assembleTSVector(t, func(ch string) *chunkLexemes { return use[ch] })
	}
	return out, nil
}

// assembleTSVector builds the tsvector literal of text from the tsvectors
// of its chunks, as to_tsvector does: each lexeme's positions ascending,
// capped at maxEntryPos, a position once, at most maxNumPos-1 of them.
func assembleTSVector(text string, chunk func(string) *chunkLexemes) string {
	positions := map[string][]int{}
	var order []string
	offset := 0
	for _, ch := range strings.Split(text, " ") {
		if ch == "" {
			continue
		}
		cl := chunk(ch)
		for i, lex := range cl.lexemes {
			ps, seen := positions[lex]
			if !seen {
				order = append(order, lex)
			}
			for _, p := range cl.pos[i] {
				ps = append(ps, offset+p)
			}
			positions[lex] = ps
		}
		offset += cl.span
	}
	sort.Strings(order)
	var b strings.Builder
	for i, lex := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(lex, `\`, `\\`), `'`, `''`))
		b.WriteByte('\'')
		ps := positions[lex]
		sort.Ints(ps)
		n, last := 0, 0
		for _, p := range ps {
			p = min(p, maxEntryPos)
			if n > 0 && (p == last || last == maxEntryPos || n >= maxNumPos-1) {
				continue
			}
			if n == 0 {
				b.WriteByte(':')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
			n, last = n+1, p
		}
	}
	return b.String()
}
