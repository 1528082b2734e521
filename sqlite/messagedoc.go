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
// message itself counts fully, one found in who said it, when, or in the
// turn the message answers counts for less, so that of two messages the one
// that says the words ranks first. Tuned on the LoCoMo retrieval benchmark
// (docs/benchmarks.md, "Retrieval on LoCoMo").
const (
	weightText    = 1.0
	weightWho     = 0.5
	weightDate    = 0.5
	weightContext = 0.3
)

// messageRank is the bm25 call that ranks message_words.
var messageRank = fmt.Sprintf("bm25(message_words, %g, %g, %g, %g)", weightText, weightWho, weightDate, weightContext)

// maxContextRunes bounds the previous turn indexed with a message: a reply
// answers the end of a long turn more than its beginning, so the tail is
// kept.
const maxContextRunes = 600

// messageDoc is what the keyword index holds for one message.
type messageDoc struct {
	text, who, date, context string
}

// newMessageDoc makes the index document of m, which follows prev (the
// content of the session's previous message, "" for the first).
func newMessageDoc(m imprint.Message, prev string) messageDoc {
	return messageDoc{
		text:    m.Content,
		who:     m.Speaker,
		date:    keyword.DateTerms(m.Timestamp.Time, m.Content),
		context: tail(prev, maxContextRunes),
	}
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
var lastMessageSQL = wsql(`SELECT content FROM messages WHERE ` + scopeWhere("") +
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
	var lastKey, prev string
	for rows.Next() {
		var seq int64
		var tenant, user, agent, session, stamp string
		var m imprint.Message
		if err := rows.Scan(&seq, &tenant, &user, &agent, &session, &m.Content, &stamp, &m.Speaker); err != nil {
			return err
		}
		if key := strings.Join([]string{tenant, user, agent, session}, "\x00"); key != lastKey {
			lastKey, prev = key, ""
		}
		m.Timestamp = parseTS(stamp)
		if err := w.insertMessage(seq, newMessageDoc(m, prev)); err != nil {
			return err
		}
		prev = m.Content
	}
	return rows.Err()
}
