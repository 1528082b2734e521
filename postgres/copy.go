package postgres

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

// Messages of sessions that have none stored yet (an import's new
// transcripts) cannot collide with a stored id: the session's row is
// locked for the transaction and the batch's repeated ids are dropped
// before. They are written with one COPY … FROM STDIN (FORMAT binary)
// instead of multi-row INSERTs with ON CONFLICT: the server neither parses
// tsvector literals nor runs setweight and ||, checks no unique index
// before each row, and inserts the rows in multi-row heap writes. Their
// seqs are taken from the sequence first, in the messages' order, as the
// column default would have given them.

// copyMessageCols are the columns a COPY of messages fills, in the order of
// appendCopyMessage.
const copyMessageCols = `seq, tenant, user_id, agent, workspace, session_id, id, role, content, ts, recorded_at, speaker,
	vec, embedder, dim, words, who, cjk, ntok`

// copyHeader starts a binary COPY stream: its signature, flags and the
// length of the header extension.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// tsvEntry is one lexeme of a tsvector with its positions, each with its
// weight in the top two bits (PostgreSQL's WordEntryPos).
type tsvEntry struct {
	lex *lexeme
	pos []uint16
}

// The weights of setweight, as WordEntryPos stores them.
const (
	weightA   uint16 = 3 << 14
	weightB   uint16 = 2 << 14
	posMask   uint16 = 1<<14 - 1
	weightMsk        = ^posMask
)

// tsvectorOf returns the lexemes of ents (sorted in place) as to_tsvector
// makes them, by the rules of appendTSVector, each position of weight w.
// The entries and their positions take one allocation each: an entry's
// positions are a full slice of one array, so appending to them copies.
func tsvectorOf(ents []lexPos, w uint16) []tsvEntry {
	sortLexPos(ents)
	out := make([]tsvEntry, 0, len(ents))
	pos := make([]uint16, 0, len(ents))
	var cur *tsvEntry
	start, last := 0, 0
	for _, e := range ents {
		if cur == nil || e.lex != cur.lex && e.lex.text != cur.lex.text {
			if cur != nil {
				cur.pos = pos[start:len(pos):len(pos)]
			}
			out = append(out, tsvEntry{lex: e.lex})
			cur, start, last = &out[len(out)-1], len(pos), 0
		}
		p := min(e.pos, maxEntryPos)
		n := len(pos) - start
		if n > 0 && (p == last || last == maxEntryPos || n >= maxNumPos-1) {
			continue
		}
		pos = append(pos, uint16(p)|w)
		last = p
	}
	if cur != nil {
		cur.pos = pos[start:len(pos):len(pos)]
	}
	return out
}

// concatTSVectors is a || b, as PostgreSQL's tsvector_concat makes it: b's
// positions are shifted by a's highest, a lexeme of both keeps a's
// positions then b's, and a lexeme's positions stop at maxNumPos or at the
// highest position.
func concatTSVectors(a, b []tsvEntry) []tsvEntry {
	if len(b) == 0 {
		return a
	}
	maxpos := 0
	for _, e := range a {
		for _, p := range e.pos {
			maxpos = max(maxpos, int(p&posMask))
		}
	}
	out := make([]tsvEntry, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		c := 0
		switch {
		case i == len(a):
			c = 1
		case j == len(b):
			c = -1
		default:
			c = strings.Compare(a[i].lex.text, b[j].lex.text)
		}
		switch {
		case c < 0:
			out = append(out, a[i])
			i++
		case c > 0:
			out = append(out, tsvEntry{lex: b[j].lex, pos: addPositions(nil, b[j].pos, maxpos)})
			j++
		default:
			out = append(out, tsvEntry{lex: a[i].lex, pos: addPositions(slices.Clip(a[i].pos), b[j].pos, maxpos)})
			i++
			j++
		}
	}
	return out
}

// addPositions appends src's positions shifted by maxpos to dst, as
// PostgreSQL's add_pos does.
func addPositions(dst, src []uint16, maxpos int) []uint16 {
	for _, p := range src {
		if len(dst) >= maxNumPos || len(dst) > 0 && int(dst[len(dst)-1]&posMask) == maxEntryPos {
			break
		}
		np := min(int(p&posMask)+maxpos, maxEntryPos)
		dst = append(dst, p&weightMsk|uint16(np))
	}
	return dst
}

// appendTSVectorBinary appends the binary form of the tsvector es
// (tsvectorsend's): the lexemes' count, then each lexeme NUL-terminated
// with its positions' count and positions.
func appendTSVectorBinary(b []byte, es []tsvEntry) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(es)))
	for _, e := range es {
		b = append(b, e.lex.text...)
		b = append(b, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(len(e.pos)))
		for _, p := range e.pos {
			b = binary.BigEndian.AppendUint16(b, p)
		}
	}
	return b
}

// sortLexPos sorts ents by lexeme, then position.
func sortLexPos(ents []lexPos) {
	slices.SortFunc(ents, func(x, y lexPos) int {
		// Most lexemes differ in their first eight bytes: their keys
		// decide. Lexemes are interned, but a chunk cached before the
		// cache was emptied may hold a copy of one.
		if c := cmp.Compare(x.key, y.key); c != 0 {
			return c
		}
		if x.lex != y.lex {
			if c := strings.Compare(x.lex.text, y.lex.text); c != 0 {
				return c
			}
		}
		return x.pos - y.pos
	})
}

// copyField appends one field: its length, then what add appends.
func copyField(b []byte, add func([]byte) []byte) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	b = add(b)
	binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

func copyText(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func copyNull(b []byte) []byte { return binary.BigEndian.AppendUint32(b, math.MaxUint32) }

func copyInt4(b []byte, n int) []byte {
	b = binary.BigEndian.AppendUint32(b, 4)
	return binary.BigEndian.AppendUint32(b, uint32(int32(n)))
}

func copyInt8(b []byte, n int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(n))
}

// y2kMicros is 2000-01-01 UTC, PostgreSQL's epoch, in microseconds since
// the Unix epoch.
const y2kMicros = 946_684_800_000_000

// copyTime appends t as a timestamptz (NULL when zero), as pgx encodes it.
func copyTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return copyNull(b)
	}
	return copyInt8(b, t.Unix()*1_000_000+int64(t.Nanosecond())/1000-y2kMicros)
}

// appendCopyMessage appends the COPY row of message i of p (seq its seq,
// words and who its tsvectors in binary).
func (p *appendPlan) appendCopyMessage(b []byte, i int, seq int64, words, who []byte) []byte {
	m, scope := p.keep[i], p.b.Scope
	b = binary.BigEndian.AppendUint16(b, 19)
	b = copyInt8(b, seq)
	for _, s := range []string{scope.Tenant, scope.User, scope.Agent, m.Workspace, p.b.SessionID, m.ID, string(m.Role), m.Content} {
		b = copyText(b, s)
	}
	b = copyTime(b, m.Timestamp.Time)
	b = copyTime(b, p.recs[i].Time)
	b = copyText(b, m.Speaker)
	emb := ""
	if len(m.Vec) == 0 {
		b = copyNull(b)
	} else {
		emb = m.Embedder
		b = copyField(b, func(b []byte) []byte {
			b, _ = encodeFloat4Array{}.Encode(m.Vec, b)
			return b
		})
	}
	b = copyText(b, emb)
	b = copyInt4(b, len(m.Vec))
	b = binary.BigEndian.AppendUint32(b, uint32(len(words)))
	b = append(b, words...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(who)))
	b = append(b, who...)
	b = copyText(b, p.cjks[i])
	return copyInt4(b, p.ntoks[i])
}

// copyRound records the messages of plans, batches of distinct sessions
// that have no message stored (their rows locked by tx), with one COPY,
// and fills each plan's inserted seqs. docs are the plans' docs in turn.
func (db *DB) copyRound(ctx context.Context, tx pgx.Tx, plans []*appendPlan, docs []string) error {
	n := 0
	for _, p := range plans {
		n += len(p.keep)
	}
	if n == 0 {
		return nil
	}
	ents, err := db.tsvectorEntries(ctx, tx, docs...)
	if err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT nextval('messages_seq_seq') FROM generate_series(1, $1)`, n)
	if err != nil {
		return err
	}
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	if len(seqs) != n {
		return fmt.Errorf("copy messages: %d seqs for %d messages", len(seqs), n)
	}
	slices.Sort(seqs)
	// The rows are encoded as the COPY sends them (copyStream), each with
	// its plan, message and seq in turn.
	type at struct {
		p   *appendPlan
		i   int
		ent [][]lexPos // the message's words, dates and who it is from
	}
	msgs := make([]at, 0, n)
	off := 0
	for _, p := range plans {
		for i := range p.keep {
			p.inserted[p.keep[i].ID] = seqs[len(msgs)]
			msgs = append(msgs, at{p, i, ents[off+3*i : off+3*i+3]})
		}
		off += len(p.docs)
	}
	var words, who []byte
	r := &copyStream{n: n, row: func(b []byte, k int) ([]byte, error) {
		e := msgs[k].ent
		words = appendTSVectorBinary(words[:0], concatTSVectors(tsvectorOf(e[0], weightA), tsvectorOf(e[1], weightB)))
		who = appendTSVectorBinary(who[:0], tsvectorOf(e[2], 0))
		return msgs[k].p.appendCopyMessage(b, msgs[k].i, seqs[k], words, who), nil
	}}
	return copyFrom(ctx, tx, r, `COPY messages (`+copyMessageCols+`) FROM STDIN (FORMAT binary)`)
}

// copyStream is a binary COPY stream, read by pgconn's CopyFrom a buffer
// at a time: the header, the n rows that row appends, each encoded as the
// stream is read, and the trailer. The server inserts the first rows while
// the next are encoded, and the stream holds at most a buffer's worth of
// rows instead of all of them. CopyFrom reads in a goroutine of its own,
// which it does not always wait for when the connection fails: send the
// stream with copyFrom, which returns only once row is no longer called.
type copyStream struct {
	n   int
	row func(b []byte, i int) ([]byte, error)

	mu     sync.Mutex
	closed bool
	begun  bool // the header is encoded
	next   int  // rows encoded
	buf    []byte
	off    int // of buf, read
	end    bool
}

// copyFrom runs the COPY sql with the rows of s.
func copyFrom(ctx context.Context, tx pgx.Tx, s *copyStream, sql string) error {
	_, err := tx.Conn().PgConn().CopyFrom(ctx, s, sql)
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return err
}

// errCopyClosed is what a read of a stream returns after its copyFrom.
var errCopyClosed = errors.New("copy stream closed")

// Read implements io.Reader.
func (s *copyStream) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errCopyClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !s.end && len(s.buf)-s.off < len(p) {
		// Fill p: what is left of the last row first, then the next rows
		// (each read a full CopyData message, not a row's tail alone).
		left := copy(s.buf, s.buf[s.off:])
		s.buf, s.off = s.buf[:left], 0
		if !s.begun {
			s.buf, s.begun = append(s.buf, copyHeader...), true
		}
		for s.next < s.n && len(s.buf) < len(p) {
			b, err := s.row(s.buf, s.next)
			if err != nil {
				return 0, err
			}
			s.buf = b
			s.next++
		}
		if s.next == s.n {
			s.buf = binary.BigEndian.AppendUint16(s.buf, math.MaxUint16) // the trailer: -1
			s.end = true
		}
	}
	if s.off == len(s.buf) {
		return 0, io.EOF
	}
	k := copy(p, s.buf[s.off:])
	s.off += k
	return k, nil
}

// The traces of new captures go in one COPY too, behind the savepoint of
// insertNewCaptures: a trace id taken fails it as it failed the INSERTs,
// and the captures are then written one by one, naming the conflict.

// copyTraceCols are the columns a COPY of traces fills, in the order of
// appendCopyTrace.
const copyTraceCols = `id, tenant, user_id, agent, workspace, session_id,
	step_index, ts, user_text, agent_text, tool_calls, reflection, reflection_source, alpha, usable,
	depth, is_subagent, truncated, vec_summary, vec_action, embedder, dim, words, cjk, ntok,
	value, priority, r_human, episode_id, step_key, created_at`

func copyFloat8(b []byte, f float64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

func copyBool(b []byte, v bool) []byte {
	b = binary.BigEndian.AppendUint32(b, 1)
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// copyVec appends v as a float4[] (NULL when empty).
func copyVec(b []byte, v []float32) []byte {
	if len(v) == 0 {
		return copyNull(b)
	}
	return copyField(b, func(b []byte) []byte {
		b, _ = encodeFloat4Array{}.Encode(v, b)
		return b
	})
}

// appendCopyTrace appends the COPY row of t, a trace of episode epID with
// the columns of traceRow, its tsvector words in binary.
func appendCopyTrace(b []byte, t imprint.Trace, epID string, words []byte, cjk string, ntok int) ([]byte, error) {
	toolsJSON, err := toolCallsJSON(t)
	if err != nil {
		return nil, err
	}
	b = binary.BigEndian.AppendUint16(b, 31)
	for _, s := range []string{t.ID, t.Scope.Tenant, t.Scope.User, t.Scope.Agent, t.Workspace, t.SessionID} {
		b = copyText(b, s)
	}
	b = copyInt4(b, t.StepIndex)
	b = copyTime(b, t.TS.Time)
	b = copyText(b, t.UserText)
	b = copyText(b, t.AgentText)
	b = copyText(b, toolsJSON)
	if t.Reflection == nil {
		b = copyNull(b)
	} else {
		b = copyText(b, *t.Reflection)
	}
	b = copyText(b, string(t.ReflectionSource))
	b = copyFloat8(b, t.Alpha)
	b = copyBool(b, t.Usable)
	b = copyInt4(b, t.Depth)
	b = copyBool(b, t.IsSubagent)
	b = copyBool(b, t.Truncated)
	b = copyVec(b, t.VecSummary)
	b = copyVec(b, t.VecAction)
	b = copyText(b, t.Embedder)
	b = copyInt4(b, max(len(t.VecSummary), len(t.VecAction)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(words)))
	b = append(b, words...)
	b = copyText(b, cjk)
	b = copyInt4(b, ntok)
	b = copyFloat8(b, t.Value)
	b = copyFloat8(b, t.Priority)
	if t.RHuman == nil {
		b = copyNull(b)
	} else {
		b = copyFloat8(b, *t.RHuman)
	}
	b = copyText(b, epID)
	b = copyText(b, t.StepKey)
	return copyTime(b, t.CreatedAt.Time), nil
}

// copyTraces writes the traces of the new episodes eps with one COPY.
func copyTraces(ctx context.Context, tx pgx.Tx, eps []imprint.Episode, traces [][]imprint.Trace, idx []traceIndex) error {
	type at struct{ c, i int }
	var rows []at
	for c := range eps {
		for i := range traces[c] {
			rows = append(rows, at{c, i})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var words []byte
	r := &copyStream{n: len(rows), row: func(b []byte, k int) ([]byte, error) {
		c, i := rows[k].c, rows[k].i
		words = appendTSVectorBinary(words[:0], tsvectorOf(idx[c].ents[i], 0))
		return appendCopyTrace(b, traces[c][i], eps[c].ID, words, idx[c].cjk[i], idx[c].ntok[i])
	}}
	return copyFrom(ctx, tx, r, `COPY traces (`+copyTraceCols+`) FROM STDIN (FORMAT binary)`)
}
