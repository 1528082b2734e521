package importer

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/wire"
)

// SourceImprint is the Source of transcripts read from imprint's own JSON
// (CONTRACTS.md §4.1 episodes, §4.2 messages).
const SourceImprint = "imprint"

// Warning reports one piece of input that could not be imported; the rest
// of the file still is. It is the native format reader's warning, so both
// carry the same file and line.
type Warning = wire.Warning

// The input-hygiene checks and the line reader every reader here shares
// are the native format's (package wire), so a file import and the HTTP
// API accept and refuse the same input.
var (
	eachLine        = wire.EachLine
	checkDocument   = wire.CheckDocument
	lineProblem     = wire.LineProblem
	checkID         = wire.CheckID
	checkScope      = wire.CheckScope
	invalidAt       = wire.Invalid
	field           = wire.Field
	hasKey          = wire.HasKey
	setEpisodeTimes = wire.SetTimes
)

// ReadImprint reads imprint's own JSON for `imprint import --format
// imprint`: §4.1 episodes (grouped into one transcript per session, their
// user and assistant text as L0 messages) or §4.2 messages (a messages
// object, or a stream of message objects whose session is the file's base
// name). Messages without an id get one derived from (session, episode,
// position, content), so importing the file again records nothing new;
// episodes without an id keep it empty for capture to derive. A malformed
// JSONL line and an unusable episode or message of a stream or list are
// skipped with a warning naming file and line (on the first transcript);
// the rest still imports. Input with nothing usable is an error of kind
// ErrInvalid naming the field.
func ReadImprint(r io.Reader, file string) ([]Transcript, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	doc, err := wire.ReadDocument(data, file, func() string {
		if session := sessionFromFile(file); session != "" {
			return session
		}
		return imprint.ContentID(SourceImprint, data)
	})
	if err != nil {
		return nil, err
	}
	if doc.Messages != nil {
		sid, msgs, pos := doc.Messages.SessionID, doc.Messages.Messages, doc.Positions
		for i := range msgs {
			if msgs[i].ID == "" {
				msgs[i].ID = derivedID(SourceImprint, sid, "message", strconv.Itoa(pos[i]), string(msgs[i].Role), msgs[i].Content)
			}
		}
		return []Transcript{{Source: SourceImprint, SessionID: sid, Messages: msgs, BetweenPeople: doc.Messages.BetweenPeople, Warnings: doc.Warnings}}, nil
	}
	eps, warnings := doc.Episodes, doc.Warnings
	var out []Transcript
	index := map[string]int{}
	for _, ep := range eps {
		i, ok := index[ep.SessionID]
		if !ok {
			i = len(out)
			index[ep.SessionID] = i
			out = append(out, Transcript{Source: SourceImprint, SessionID: ep.SessionID})
		}
		// A given id is escaped to hold no NUL, so it never equals the
		// NUL-joined key of an id-less episode.
		epKey := string(imprint.AppendKeyPart(nil, 0, ep.ID))
		if epKey == "" && len(ep.Turns) > 0 {
			epKey = ep.Turns[0].TS.String() + "\x00" + ep.Turns[0].Content
		}
		for j, t := range ep.Turns {
			if (t.Role != imprint.RoleUser && t.Role != imprint.RoleAssistant) || t.Meta.IsSubagent || strings.TrimSpace(t.Content) == "" {
				continue
			}
			id := t.ID
			if id == "" {
				id = derivedID(SourceImprint, ep.SessionID, epKey, strconv.Itoa(j), string(t.Role), t.Content)
			}
			out[i].Messages = append(out[i].Messages, imprint.Message{
				ID: id, SessionID: ep.SessionID, Scope: ep.Scope, Role: t.Role,
				Content: t.Content, Timestamp: t.TS, Speaker: t.Meta.Speaker,
			})
		}
		out[i].Episodes = append(out[i].Episodes, ep)
	}
	if len(warnings) > 0 && len(out) > 0 {
		out[0].Warnings = warnings
	}
	return out, nil
}
