package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

// Column weights of message_words in bm25: a query word found in the
// message itself counts fully, one found in its dates half. Chosen on the
// LoCoMo retrieval benchmark (docs/benchmarks.md, "Retrieval on LoCoMo").
// The speaker column is only ever queried alone (messagesBySpeaker).
const (
	weightText = 1.0
	weightDate = 0.5
	weightWho  = 1.0
)

// messageRank is the bm25 call that ranks message_words.
var messageRank = fmt.Sprintf("bm25(message_words, %g, %g, %g)", weightText, weightDate, weightWho)

// weightSpeaker raises the score of a message whose speaker the query
// names ("What did Caroline paint?") by this share. The speaker is
// matched at query time on the messages the words found, not ranked in the
// index: in a conversation of two people each name is the speaker of half
// of the messages, so as a ranked term it made every question that names
// someone score half the conversation.
const weightSpeaker = 1.5

// A message's neighbours in its session share its score: the reply gains
// weightReply of the score of the message it answers ("What did you
// paint?" → "A sunset."), and the message gains weightAnswered of its
// reply's ("Here's our latest one [photo]" → "Wow, that sunset painting is
// gorgeous!"), both below a message that says the words itself. This is
// scored at query time (messageContext) rather than indexed with every
// message: indexed, the previous turn doubled the rows a common word
// matches and made message search at 100k rows up to 3x slower.
// Chosen on the LoCoMo retrieval benchmark (docs/benchmarks.md).
const (
	weightReply    = 0.7
	weightAnswered = 0.4
)

// messageDoc is what the keyword index holds for one message.
type messageDoc struct {
	text, date, who string
}

// newMessageDoc makes the index document of m, which follows a message of
// prevSpeaker (keyword.NewMessageDoc).
func newMessageDoc(m imprint.Message, prevSpeaker string) messageDoc {
	d := keyword.NewMessageDoc(m.Content, m.Timestamp.Time, m.Speaker, prevSpeaker)
	return messageDoc{text: d.Text, date: d.Date, who: d.Who}
}

// lastSpeakerSQL reads the speaker of a session's latest message, whom the
// next one recorded answers.
var lastSpeakerSQL = wsql(`SELECT speaker FROM messages WHERE ` + scopeWhere("") +
	` AND session_id = ? ORDER BY seq DESC LIMIT 1`)

// migrationSteps are Go steps run after a migration's SQL, in its
// transaction, for what SQL alone cannot compute.
var migrationSteps = map[int]func(ctx context.Context, tx *sql.Tx) error{
	4: reindexMessages,
}

// reindexMessages fills the new message_words (migration 0004) from the
// stored messages.
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
	var lastKey, prevSpeaker string
	for rows.Next() {
		var seq int64
		var tenant, user, agent, session, stamp string
		var m imprint.Message
		if err := rows.Scan(&seq, &tenant, &user, &agent, &session, &m.Content, &stamp, &m.Speaker); err != nil {
			return err
		}
		if key := string(imprint.AppendKeyParts(nil, 0, tenant, user, agent, session)); key != lastKey {
			lastKey, prevSpeaker = key, ""
		}
		m.Timestamp = parseTS(stamp)
		if err := w.insertMessage(seq, newMessageDoc(m, prevSpeaker)); err != nil {
			return err
		}
		prevSpeaker = m.Speaker
	}
	return rows.Err()
}
