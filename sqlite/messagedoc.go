package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

// Column weights of message_words in bm25: a query word found in the
// message itself or in who said it counts fully, one found in its dates or
// in the turn it answers counts half, so that of two messages the one that
// says the words ranks first. Chosen on the LoCoMo retrieval benchmark
// (docs/benchmarks.md, "Retrieval on LoCoMo"), where recall@10 moved by
// less than 0.02 over who 0.5–2 and context 0.5–0.9.
const (
	weightText    = 1.0
	weightWho     = 1.0
	weightDate    = 0.5
	weightContext = 0.5
)

// messageRank is the bm25 call that ranks message_words.
var messageRank = fmt.Sprintf("bm25(message_words, %g, %g, %g, %g)", weightText, weightWho, weightDate, weightContext)

// maxContextRunes bounds the previous turn indexed with a message: a reply
// answers the end of a long turn more than its beginning, so the tail is
// kept. Every context word is one more match for the queries it is in, so
// it costs search time at size: at 600 runes message search at 100k rows
// was 1.5x slower than without context, at 200 recall@10 on LoCoMo is the
// same as at 600 (docs/benchmarks.md).
const maxContextRunes = 200

// messageDoc is what the keyword index holds for one message.
type messageDoc struct {
	text, who, date, context string
}

// newMessageDoc makes the index document of m, which follows prev (the
// session's previous message; zero for the first). Between people, the
// name of the one m answers is most often a form of address ("Wow,
// Melanie!"), which says nothing of what m is about: it is left out of m's
// own words, so a question about Melanie finds what Melanie said.
func newMessageDoc(m imprint.Message, prev imprint.Message) messageDoc {
	text := m.Content
	if prev.Speaker != "" && !strings.EqualFold(prev.Speaker, m.Speaker) {
		text = withoutWord(text, prev.Speaker)
	}
	return messageDoc{
		text:    text,
		who:     m.Speaker,
		date:    keyword.DateTerms(m.Timestamp.Time, m.Content),
		context: tail(prev.Content, maxContextRunes),
	}
}

// withoutWord returns s with every whole-word occurrence of w (any case)
// replaced by a space.
func withoutWord(s, w string) string {
	lw := strings.ToLower(w)
	ls := strings.ToLower(s)
	if lw == "" || !strings.Contains(ls, lw) || len(ls) != len(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.Index(ls[i:], lw)
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i
		end := j + len(lw)
		if isBoundary(s, j-1) && isBoundary(s, end) {
			b.WriteString(s[i:j])
			b.WriteByte(' ')
		} else {
			b.WriteString(s[i:end])
		}
		i = end
	}
	return b.String()
}

// isBoundary reports whether s has no word character at byte i.
func isBoundary(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return !isWordRune(r)
}

// tail returns the last n runes of s.
func tail(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[len(rs)-n:])
}

// lastMessageSQL reads the content of a session's latest message, the
// previous turn of the next one recorded.
var lastMessageSQL = wsql(`SELECT content, speaker FROM messages WHERE ` + scopeWhere("") +
	` AND session_id = ? ORDER BY seq DESC LIMIT 1`)

// migrationSteps are Go steps run after a migration's SQL, in its
// transaction, for what SQL alone cannot compute.
var migrationSteps = map[int]func(ctx context.Context, tx *sql.Tx) error{
	4: reindexMessages,
}

// reindexMessages fills the new message_words (migration 0004) from the
// stored messages, each with its context.
func reindexMessages(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT seq, tenant, user_id, agent, session_id, content, timestamp, speaker
		FROM messages ORDER BY tenant, user_id, agent, session_id, seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	ins, err := tx.PrepareContext(ctx, ftsSQL["message"][ftsInsWords])
	if err != nil {
		return err
	}
	defer ins.Close()
	w := &ftsWriter{exec: func(i int, args ...any) error {
		if i != ftsInsWords {
			return nil // the trigram index is unchanged
		}
		_, err := ins.ExecContext(ctx, args...)
		return err
	}, close: func() {}}
	var lastKey string
	var prev imprint.Message
	for rows.Next() {
		var seq int64
		var tenant, user, agent, session, stamp string
		var m imprint.Message
		if err := rows.Scan(&seq, &tenant, &user, &agent, &session, &m.Content, &stamp, &m.Speaker); err != nil {
			return err
		}
		if key := strings.Join([]string{tenant, user, agent, session}, "\x00"); key != lastKey {
			lastKey, prev = key, imprint.Message{}
		}
		m.Timestamp = parseTS(stamp)
		if err := w.insertMessage(seq, newMessageDoc(m, prev)); err != nil {
			return err
		}
		prev = m
	}
	return rows.Err()
}
