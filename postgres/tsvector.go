package postgres

import (
	"context"
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
// stems the chunks of ASCII letters itself (porter.go), asks the server for
// the tsvector of each other chunk it has not seen yet, keeps them all,
// and sends the assembled tsvectors as literals. The result is the
// tsvector the server would have computed (TestTSVectorsMatchServer).

// lexeme is one lexeme of the cache: its text, and its quoted literal
// ('text', with \ and ' escaped), made once.
type lexeme struct {
	text, lit string
	// key is lexKey(text).
	key uint64
}

// newLexeme makes the cache's lexeme of text.
func newLexeme(text string) *lexeme {
	return &lexeme{text: text, lit: `'` + strings.ReplaceAll(strings.ReplaceAll(text, `\`, `\\`), `'`, `''`) + `'`, key: lexKey(text)}
}

// lexKey is s's first eight bytes as a big-endian number, zero-padded:
// of two texts without NUL (a lexeme has none), the one with the smaller
// key is first in byte order, and equal keys leave the order to the bytes
// after the eighth.
func lexKey(s string) uint64 {
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}

// lexPos is one position of a lexeme, with the lexeme's key at hand for
// sorting.
type lexPos struct {
	lex *lexeme
	key uint64
	pos int
}

// chunkLexemes is the tsvector of one chunk: each position of each of its
// lexemes (counted from 1), and how many positions the chunk takes.
type chunkLexemes struct {
	ents []lexPos
	span int
}

// lexemeCache maps chunks to their tsvectors, for the life of a DB.
type lexemeCache struct {
	// porter is whether the configuration stems asciiwords with Porter's
	// stemmer alone (porterDictionary), so that the store may stem them
	// itself; set by Open.
	porter bool

	mu     sync.Mutex
	chunks map[string]*chunkLexemes
	// lexemes interns the lexemes of the chunks (cleared with them).
	lexemes map[string]*lexeme
}

// reset empties the cache. c.mu is held.
func (c *lexemeCache) reset() {
	c.chunks, c.lexemes = map[string]*chunkLexemes{}, map[string]*lexeme{}
}

// intern returns the cache's lexeme of text, made on first use. c.mu is
// held.
func (c *lexemeCache) intern(text string) *lexeme {
	lx, ok := c.lexemes[text]
	if !ok {
		lx = newLexeme(text)
		c.lexemes[text] = lx
	}
	return lx
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

// eachChunk calls f with each non-empty space-separated chunk of text.
func eachChunk(text string, f func(string)) {
	for text != "" {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			f(text)
			return
		}
		if i > 0 {
			f(text[:i])
		}
		text = text[i+1:]
	}
}

// tsvectors returns for each text the literal of to_tsvector('imprint',
// text), asking q (a connection or the caller's transaction) for the
// chunks not cached yet in one statement.
func (db *DB) tsvectors(ctx context.Context, q querier, texts ...string) ([]string, error) {
	ents, err := db.tsvectorEntries(ctx, q, texts...)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(texts))
	var b []byte
	for i, e := range ents {
		b = appendTSVector(b[:0], e)
		out[i] = string(b)
	}
	return out, nil
}

// tsvectorEntries returns for each text the lexeme positions of
// to_tsvector('imprint', text), unsorted, asking q for the chunks not
// cached yet in one statement.
func (db *DB) tsvectorEntries(ctx context.Context, q querier, texts ...string) ([][]lexPos, error) {
	c := &db.lexemes
	// refs holds the tsvector of every chunk of every text in turn, ends
	// where each text's end; missing the chunks not cached, filled below.
	refs := make([]*chunkLexemes, 0, 16*len(texts))
	ends := make([]int, len(texts))
	var missing []string
	var fresh map[string]*chunkLexemes
	c.mu.Lock()
	if c.chunks == nil {
		c.reset()
	}
	for i, t := range texts {
		eachChunk(t, func(ch string) {
			cl, ok := c.chunks[ch]
			if !ok {
				cl, ok = c.stemLocally(ch)
			}
			if !ok {
				if cl, ok = fresh[ch]; !ok {
					if fresh == nil {
						fresh = map[string]*chunkLexemes{}
					}
					cl = &chunkLexemes{}
					fresh[ch] = cl
					missing = append(missing, ch)
				}
			}
			refs = append(refs, cl)
		})
		ends[i] = len(refs)
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		if err := db.fetchChunks(ctx, q, missing, fresh); err != nil {
			return nil, err
		}
	}
	n := 0
	for _, cl := range refs {
		n += len(cl.ents)
	}
	// One backing array for every text's entries.
	all := make([]lexPos, 0, n)
	out := make([][]lexPos, len(texts))
	start := 0
	for i, end := range ends {
		from := len(all)
		offset := 0
		for _, cl := range refs[start:end] {
			for _, e := range cl.ents {
				all = append(all, lexPos{e.lex, e.key, offset + e.pos})
			}
			offset += cl.span
		}
		start = end
		out[i] = all[from:len(all):len(all)]
	}
	return out, nil
}

// stemLocally caches and returns the tsvector of chunk when the store
// makes it itself (localLexeme): one lexeme at position 1. c.mu is held.
func (c *lexemeCache) stemLocally(chunk string) (*chunkLexemes, bool) {
	if !c.porter {
		return nil, false
	}
	text, ok := localLexeme(chunk)
	if !ok {
		return nil, false
	}
	if len(c.chunks) >= maxCachedChunks {
		c.reset()
	}
	lx := c.intern(text)
	cl := &chunkLexemes{ents: []lexPos{{lx, lx.key, 1}}, span: 1}
	c.chunks[chunk] = cl
	return cl, true
}

// fetchChunks asks q for the tsvectors of the chunks missing, fills their
// entries of fresh and adds them to the cache.
func (db *DB) fetchChunks(ctx context.Context, q querier, missing []string, fresh map[string]*chunkLexemes) error {
	type row struct {
		o   int
		lex string
		pos []int16
	}
	rows, err := q.Query(ctx, `SELECT w.o, l.lexeme, l.positions
		FROM unnest($1::text[]) WITH ORDINALITY AS w(t, o), unnest(to_tsvector('imprint', w.t)) AS l`, missing)
	if err != nil {
		return err
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.o, &r.lex, &r.pos); err != nil {
			rows.Close()
			return err
		}
		got = append(got, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	c := &db.lexemes
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.chunks)+len(missing) > maxCachedChunks {
		c.reset()
	}
	for _, r := range got {
		lx := c.intern(r.lex)
		cl := fresh[missing[r.o-1]]
		for _, p := range r.pos {
			cl.ents = append(cl.ents, lexPos{lx, lx.key, int(p)})
			cl.span = max(cl.span, int(p))
		}
	}
	for _, ch := range missing {
		c.chunks[ch] = fresh[ch]
	}
	return nil
}

// appendTSVector appends to b the tsvector literal of the lexeme positions
// ents (sorted in place), as to_tsvector makes it: lexemes in byte order,
// each one's positions ascending, capped at maxEntryPos, a position once, at
// most maxNumPos-1 of them.
func appendTSVector(b []byte, ents []lexPos) []byte {
	sortLexPos(ents)
	var cur *lexeme
	n, last := 0, 0
	for _, e := range ents {
		if cur == nil || e.lex != cur && e.lex.text != cur.text {
			if cur != nil {
				b = append(b, ' ')
			}
			b = append(b, e.lex.lit...)
			cur, n, last = e.lex, 0, 0
		}
		p := min(e.pos, maxEntryPos)
		if n > 0 && (p == last || last == maxEntryPos || n >= maxNumPos-1) {
			continue
		}
		if n == 0 {
			b = append(b, ':')
		} else {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(p), 10)
		n, last = n+1, p
	}
	return b
}

// porterDictionary reports whether the keyword configuration of the
// schema (the imprint configuration to_tsvector resolves) stems an
// asciiword with one Snowball dictionary of Porter's stemmer, without stop
// words: a database that held records before migration 0009 keeps the
// English stemmer, whose words the store must leave to the server.
func porterDictionary(ctx context.Context, q querier) (bool, error) {
	var dicts []string
	err := q.QueryRow(ctx, `SELECT COALESCE(array_agg(t.tmplname || ': ' || lower(COALESCE(d.dictinitoption, ''))), '{}')
		FROM pg_ts_config_map m JOIN pg_ts_dict d ON d.oid = m.mapdict JOIN pg_ts_template t ON t.oid = d.dicttemplate
		WHERE m.mapcfg = 'imprint'::regconfig AND m.maptokentype = (SELECT tokid FROM ts_token_type('default') WHERE alias = 'asciiword')`).Scan(&dicts)
	if err != nil {
		return false, err
	}
	return len(dicts) == 1 && dicts[0] == "snowball: language = 'porter'", nil
}
