package importer

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/wire"
)

// BuildEpisodes splits the turns of one session into episodes: one per user
// request and the agent's whole response to it. A new episode starts at each
// user turn that follows assistant or tool activity; consecutive user turns
// stay together. A sub-agent's user turn (Meta.IsSubagent) never starts an
// episode, and system turns are left out. Each episode's id is derived from
// (source, session, first turn), so importing the same transcript again
// yields the same ids. Episodes are finalized, with Meta.Source set to source;
// the caller records L0 messages separately (see MessagesFromTurns).
func BuildEpisodes(sessionID string, scope imprint.Scope, turns []imprint.Turn, source string) []imprint.Episode {
	eps, _ := buildEpisodes(sessionID, scope, turns, source)
	return eps
}

// buildEpisodes is BuildEpisodes that also returns, for every input turn, the
// index of the episode it went to (-1 for a dropped system turn).
func buildEpisodes(sessionID string, scope imprint.Scope, turns []imprint.Turn, source string) ([]imprint.Episode, []int) {
	owner := make([]int, len(turns))
	var eps []imprint.Episode
	var cur []imprint.Turn
	active := false // the current episode has assistant or tool turns
	flush := func() {
		if len(cur) == 0 {
			return
		}
		eps = append(eps, newEpisode(sessionID, scope, cur, source))
		cur = nil
		active = false
	}
	for i, t := range turns {
		if t.Role == imprint.RoleSystem {
			owner[i] = -1
			continue
		}
		if t.Role == imprint.RoleUser && !t.Meta.IsSubagent && active {
			flush()
		}
		if t.Role == imprint.RoleAssistant || t.Role == imprint.RoleTool {
			active = true
		}
		cur = append(cur, t)
		owner[i] = len(eps)
	}
	flush()
	return eps, owner
}

// newEpisode makes a finalized episode of turns with a derived id.
func newEpisode(sessionID string, scope imprint.Scope, turns []imprint.Turn, source string) imprint.Episode {
	first := turns[0]
	// A given id is escaped to hold no NUL, so it never equals the
	// NUL-joined key of an id-less turn.
	key := string(imprint.AppendKeyPart(nil, 0, first.ID))
	if key == "" {
		key = first.TS.String() + "\x00" + string(first.Role) + "\x00" + first.Content
	}
	ep := imprint.Episode{
		ID:        derivedID(source, sessionID, "episode", key),
		SessionID: sessionID,
		Scope:     scope,
		Status:    imprint.EpisodeFinalized,
		ClosedBy:  imprint.ClosedFinalized,
		Meta:      imprint.EpisodeMeta{Source: source},
		Turns:     turns,
	}
	setEpisodeTimes(&ep)
	return ep
}

// MessagesFromTurns returns the L0 messages of a session's turns: the user
// and assistant turns with non-blank text, in order. An assistant turn that
// only calls tools (empty content), tool and system turns, and sub-agent
// turns (Meta.IsSubagent) are not messages. A turn's ID is its message id;
// a turn without one gets an id derived from (source, session, position,
// role, content), so re-import is idempotent.
func MessagesFromTurns(sessionID string, scope imprint.Scope, turns []imprint.Turn, source string) []imprint.Message {
	var out []imprint.Message
	for i, t := range turns {
		if (t.Role != imprint.RoleUser && t.Role != imprint.RoleAssistant) || t.Meta.IsSubagent {
			continue
		}
		if strings.TrimSpace(t.Content) == "" {
			continue
		}
		id := t.ID
		if id == "" {
			id = derivedID(source, sessionID, "turn", strconv.Itoa(i), string(t.Role), t.Content)
		}
		out = append(out, imprint.Message{
			ID:        id,
			SessionID: sessionID,
			Scope:     scope,
			Role:      t.Role,
			Content:   t.Content,
			Timestamp: t.TS,
			Speaker:   t.Meta.Speaker,
		})
	}
	return out
}

// transcriptOf builds the transcript of one session from its turns.
func transcriptOf(source, sessionID string, turns []imprint.Turn, warnings []Warning) Transcript {
	fillTimes(turns)
	return Transcript{
		Source:    source,
		SessionID: sessionID,
		Messages:  MessagesFromTurns(sessionID, imprint.Scope{}, turns, source),
		Episodes:  BuildEpisodes(sessionID, imprint.Scope{}, turns, source),
		Warnings:  warnings,
	}
}

// derivedID returns a deterministic id in UUID form from parts: the same
// parts always give the same id, the one earlier imports stored.
var derivedID = imprint.LengthPrefixedID

// fillTimes gives a turn without a time its predecessor's time.
func fillTimes(turns []imprint.Turn) {
	var prev imprint.Time
	for i := range turns {
		if turns[i].TS.IsZero() {
			turns[i].TS = prev
		} else {
			prev = turns[i].TS
		}
	}
}

// sessionFromFile derives a session id from a file name: its base name
// without extension, or "" for stdin and unnamed input.
func sessionFromFile(file string) string {
	if file == "" || file == "-" {
		return ""
	}
	base := filepath.Base(file)
	for _, ext := range []string{".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	if base == "." || base == string(filepath.Separator) {
		return ""
	}
	return base
}

// toolInput normalizes a tool call's arguments to compact JSON: raw JSON is kept, a
// string holding JSON is decoded (OpenAI sends arguments that way), any other
// string becomes a JSON string. Empty input is nil.
func toolInput(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil
		}
		return stringInput(s)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil
	}
	return buf.Bytes()
}

// stringInput turns tool arguments given as text into JSON.
func stringInput(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil
	}
	if (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(t)); err == nil {
			return buf.Bytes()
		}
	}
	b, _ := json.Marshal(s)
	return b
}

// joinText joins non-blank pieces, trimmed, with a blank line between them.
func joinText(parts []string) string {
	var keep []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n\n")
}

// eachJSONObject decodes every non-blank line of r into a fresh T and calls
// fn with it. A line too long, not starting with '{' or not valid JSON is
// reported to warn and skipped. It returns how many lines were not blank
// and how many were decoded, so callers can reject input with no JSON
// object line at all.
func eachJSONObject[T any](r io.Reader, warn func(line int, format string, args ...any), fn func(n int, v *T)) (nonEmpty, objects int, err error) {
	err = eachLine(r, func(n int, raw []byte, tooLong bool) {
		if tooLong {
			nonEmpty++
			warn(n, "line longer than %d bytes skipped", wire.MaxLineBytes)
			return
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			return
		}
		nonEmpty++
		if raw[0] != '{' {
			warn(n, "not a JSON object")
			return
		}
		if p := lineProblem(raw); p != "" {
			warn(n, "%s: line skipped", p)
			return
		}
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			warn(n, "malformed line: %v", err)
			return
		}
		objects++
		fn(n, &v)
	})
	return nonEmpty, objects, err
}

// sortWarnings orders warnings by file, then line, keeping the order of
// warnings on the same line.
func sortWarnings(ws []Warning) {
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].File != ws[j].File {
			return ws[i].File < ws[j].File
		}
		return ws[i].Line < ws[j].Line
	})
}

// turnBuilder collects the turns of one conversation and pairs tool calls
// with their results by call id.
type turnBuilder struct {
	source, session string
	turns           []imprint.Turn
	pending         map[string]int // call id → tool turn awaiting its result
}

func newTurnBuilder(source, session string) *turnBuilder {
	return &turnBuilder{source: source, session: session, pending: map[string]int{}}
}

// id derives a turn id from the source's own id (or position) key.
func (b *turnBuilder) id(key string) string { return derivedID(b.source, b.session, key) }

// user appends a user turn; blank text is dropped.
func (b *turnBuilder) user(key, text string, ts imprint.Time) {
	if strings.TrimSpace(text) == "" {
		return
	}
	b.turns = append(b.turns, imprint.Turn{ID: b.id(key), Role: imprint.RoleUser, Content: text, TS: ts})
}

// assistant appends an assistant turn. It is dropped when it has no text, no
// thinking and makes no calls.
func (b *turnBuilder) assistant(key, text, thinking string, ts imprint.Time, calls int) {
	if strings.TrimSpace(text) == "" && strings.TrimSpace(thinking) == "" && calls == 0 {
		return
	}
	b.turns = append(b.turns, imprint.Turn{
		ID: b.id(key), Role: imprint.RoleAssistant, Content: strings.TrimSpace(text), TS: ts,
		Meta: imprint.TurnMeta{Thinking: strings.TrimSpace(thinking)},
	})
}

// call appends a tool turn for a call whose result comes later.
func (b *turnBuilder) call(id, name string, input json.RawMessage, ts imprint.Time) {
	b.turns = append(b.turns, imprint.Turn{
		Role: imprint.RoleTool, TS: ts,
		Meta: imprint.TurnMeta{Name: name, Input: input, ToolCallID: id, StartedAt: ts},
	})
	if id != "" {
		b.pending[id] = len(b.turns) - 1
	}
}

// result fills the tool turn of call id with its output, or appends a tool
// turn of its own when the call is unknown. errText marks a failed call.
func (b *turnBuilder) result(id, name, output, errText string, ts imprint.Time) {
	if i, ok := b.pending[id]; ok && id != "" {
		t := &b.turns[i]
		t.Content, t.Meta.Error = output, errText
		if t.Meta.Name == "" {
			t.Meta.Name = name
		}
		if t.Meta.StartedAt.IsZero() || !ts.Before(t.Meta.StartedAt.Time) {
			t.Meta.EndedAt = ts
		}
		delete(b.pending, id)
		return
	}
	b.turns = append(b.turns, imprint.Turn{
		Role: imprint.RoleTool, Content: output, TS: ts,
		Meta: imprint.TurnMeta{Name: name, ToolCallID: id, Error: errText, EndedAt: ts},
	})
}

// lastCall returns the call id of the most recent tool turn named name that
// still awaits its result.
func (b *turnBuilder) lastCall(name string) (string, bool) {
	best, bestIdx := "", -1
	for id, i := range b.pending {
		if b.turns[i].Meta.Name == name && i > bestIdx {
			best, bestIdx = id, i
		}
	}
	return best, bestIdx >= 0
}
