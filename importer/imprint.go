package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// SourceImprint is the Source of transcripts read from imprint's own JSON
// (CONTRACTS.md §4.1 episodes, §4.2 messages).
const SourceImprint = "imprint"

// episodeIn is a §4.1 episode as read; fields are checked one by one so an
// error can name the field.
type episodeIn struct {
	ID        string          `json:"id"`
	SessionID *string         `json:"session_id"`
	Scope     *imprint.Scope  `json:"scope"`
	ClosedBy  string          `json:"closed_by"`
	Meta      json.RawMessage `json:"meta"`
	Turns     json.RawMessage `json:"turns"`
}

type turnIn struct {
	ID      string          `json:"id"`
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
	TS      json.RawMessage `json:"ts"`
	Meta    json.RawMessage `json:"meta"`
}

// messageIn is a §4.2 message as read.
type messageIn struct {
	ID        string          `json:"id"`
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	Timestamp json.RawMessage `json:"timestamp"`
}

// docItem is one JSON value of an input document and where it came from.
type docItem struct {
	raw   json.RawMessage
	label string // "episodes[2]", "line 3", or "" for a single object
	line  int
}

// splitDocument reads one JSON object, a JSON array, or JSONL. arrayName
// labels array elements ("episodes" → "episodes[2]"). A malformed JSONL line
// is an error naming the line.
func splitDocument(data []byte, file, arrayName string) ([]docItem, error) {
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(data) == 0 {
		return nil, invalidAt(file, "", "empty input")
	}
	if json.Valid(data) {
		switch data[0] {
		case '{':
			return []docItem{{raw: data}}, nil
		case '[':
			var elems []json.RawMessage
			if err := json.Unmarshal(data, &elems); err != nil {
				return nil, invalidAt(file, "", err.Error())
			}
			items := make([]docItem, len(elems))
			for i, e := range elems {
				items[i] = docItem{raw: e, label: fmt.Sprintf("%s[%d]", arrayName, i)}
			}
			return items, nil
		}
		return nil, invalidAt(file, "", "expected a JSON object, an array or JSONL")
	}
	if first, _, _ := bytes.Cut(data, []byte("\n")); !json.Valid(bytes.TrimSpace(first)) {
		// Not JSONL either: report where the document breaks.
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset > 0 && se.Offset <= int64(len(data)) {
			line := 1 + bytes.Count(data[:se.Offset-1], []byte("\n"))
			return nil, invalidAt(file, "line "+strconv.Itoa(line), "malformed JSON: "+se.Error())
		}
		return nil, invalidAt(file, "", "malformed JSON")
	}
	var items []docItem
	var bad error
	err := eachLine(bytes.NewReader(data), func(n int, raw []byte, tooLong bool) {
		if bad != nil {
			return
		}
		label := "line " + strconv.Itoa(n)
		if tooLong {
			bad = invalidAt(file, label, "line too long")
			return
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			return
		}
		if !json.Valid(raw) {
			bad = invalidAt(file, label, "malformed JSON")
			return
		}
		items = append(items, docItem{raw: append(json.RawMessage(nil), raw...), label: label, line: n})
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if bad != nil {
		return nil, bad
	}
	return items, nil
}

// invalidAt returns an ErrInvalid error naming file and field path.
func invalidAt(file, path, msg string) error {
	var where []string
	if file != "" && file != "-" {
		where = append(where, file)
	}
	if path != "" {
		where = append(where, path)
	}
	if len(where) == 0 {
		return imprint.Invalidf("%s", msg)
	}
	return imprint.Invalidf("%s: %s", strings.Join(where, ": "), msg)
}

// field joins a label and a field name into a path: "episodes[2]" +
// "turns[0].role" → "episodes[2].turns[0].role"; a line label reads
// "line 3: turns[0].role".
func field(label, name string) string {
	switch {
	case label == "":
		return name
	case strings.HasPrefix(label, "line "):
		return label + ": " + name
	default:
		return label + "." + name
	}
}

// ReadEpisodes reads §4.1 episodes: one episode JSON object, a JSON array of
// them, or JSONL (one per line). A turn's content may be a string or an
// array of {"type":"text","text"} parts (joined by newlines; other parts are
// skipped with a warning); ts is an RFC 3339 string or epoch milliseconds,
// and a turn without one gets its predecessor's. An episode without id keeps
// it empty: capture derives it from scope, session and first turn. Any
// unusable episode (no session_id, no turns, an unknown role or closed_by,
// a malformed time or JSON) fails the whole read with an error of kind
// ErrInvalid naming the field, e.g. `episodes[2].turns[0].role: unknown role
// "bot"`, so nothing of a bad file is captured.
func ReadEpisodes(r io.Reader, file string) ([]imprint.Episode, []Warning, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", file, err)
	}
	items, err := splitDocument(data, file, "episodes")
	if err != nil {
		return nil, nil, err
	}
	var out []imprint.Episode
	var warnings []Warning
	for _, it := range items {
		ep, ws, err := parseEpisode(it, file)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, ws...)
		out = append(out, ep)
	}
	return out, warnings, nil
}

func parseEpisode(it docItem, file string) (imprint.Episode, []Warning, error) {
	fail := func(name, format string, args ...any) error {
		return invalidAt(file, field(it.label, name), fmt.Sprintf(format, args...))
	}
	var in episodeIn
	if raw := bytes.TrimSpace(it.raw); len(raw) == 0 || raw[0] != '{' {
		return imprint.Episode{}, nil, invalidAt(file, it.label, "an episode must be a JSON object")
	}
	if err := json.Unmarshal(it.raw, &in); err != nil {
		return imprint.Episode{}, nil, invalidAt(file, it.label, "malformed episode: "+jsonErrField(err))
	}
	if in.SessionID == nil || strings.TrimSpace(*in.SessionID) == "" {
		return imprint.Episode{}, nil, fail("session_id", "required")
	}
	ep := imprint.Episode{ID: strings.TrimSpace(in.ID), SessionID: strings.TrimSpace(*in.SessionID)}
	if in.Scope != nil {
		ep.Scope = *in.Scope
	}
	switch imprint.ClosedBy(in.ClosedBy) {
	case "":
		ep.ClosedBy = imprint.ClosedFinalized
	case imprint.ClosedFinalized, imprint.ClosedAbandoned:
		ep.ClosedBy = imprint.ClosedBy(in.ClosedBy)
	default:
		return imprint.Episode{}, nil, fail("closed_by", "must be finalized or abandoned, not %q", in.ClosedBy)
	}
	if m := bytes.TrimSpace(in.Meta); len(m) > 0 && string(m) != "null" {
		if err := json.Unmarshal(m, &ep.Meta); err != nil {
			return imprint.Episode{}, nil, fail("meta", "%s", jsonErrField(err))
		}
	}
	var turns []json.RawMessage
	if t := bytes.TrimSpace(in.Turns); len(t) == 0 || string(t) == "null" {
		return imprint.Episode{}, nil, fail("turns", "required")
	} else if t[0] != '[' || json.Unmarshal(t, &turns) != nil {
		return imprint.Episode{}, nil, fail("turns", "must be a list of turns")
	}
	if len(turns) == 0 {
		return imprint.Episode{}, nil, fail("turns", "must not be empty")
	}
	var warnings []Warning
	var prev imprint.Time
	for i, raw := range turns {
		name := fmt.Sprintf("turns[%d]", i)
		var tin turnIn
		if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &tin) != nil {
			return imprint.Episode{}, nil, fail(name, "must be a turn object {role, content, ts, meta}")
		}
		if tin.Role == nil || *tin.Role == "" {
			return imprint.Episode{}, nil, fail(name+".role", "required")
		}
		role := imprint.Role(*tin.Role)
		if !role.Valid() {
			return imprint.Episode{}, nil, fail(name+".role", "unknown role %q", *tin.Role)
		}
		content, skipped, err := partsText(tin.Content)
		if err != nil {
			return imprint.Episode{}, nil, fail(name+".content", "%v", err)
		}
		if skipped > 0 {
			warnings = append(warnings, Warning{File: file, Line: it.line,
				Message: field(it.label, name+".content") + fmt.Sprintf(": %d non-text part(s) skipped", skipped)})
		}
		t := imprint.Turn{ID: strings.TrimSpace(tin.ID), Role: role, Content: content}
		if len(tin.TS) > 0 {
			if err := t.TS.UnmarshalJSON(tin.TS); err != nil {
				return imprint.Episode{}, nil, fail(name+".ts", "%v", err)
			}
		}
		if t.TS.IsZero() {
			t.TS = prev
		}
		prev = t.TS
		if m := bytes.TrimSpace(tin.Meta); len(m) > 0 && string(m) != "null" {
			if err := json.Unmarshal(m, &t.Meta); err != nil {
				return imprint.Episode{}, nil, fail(name+".meta", "%s", jsonErrField(err))
			}
		}
		ep.Turns = append(ep.Turns, t)
	}
	setEpisodeTimes(&ep)
	return ep, warnings, nil
}

// jsonErrField turns a decoding error into a short message naming the field
// when encoding/json knows it.
func jsonErrField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s: expected %s, got %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}

// partsText reads content given as a string, null, or an array of
// {"type":"text","text"} parts (joined by newlines). skipped counts parts of
// other types.
func partsText(raw json.RawMessage) (text string, skipped int, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, nil
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", 0, errors.New("malformed string")
		}
		return text, 0, nil
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", 0, errors.New("malformed list of parts")
		}
		var texts []string
		for i, p := range parts {
			var s string
			if json.Unmarshal(p, &s) == nil {
				texts = append(texts, s)
				continue
			}
			var part struct {
				Type string  `json:"type"`
				Text *string `json:"text"`
			}
			if json.Unmarshal(p, &part) != nil {
				return "", 0, fmt.Errorf("part %d is not a {\"type\":\"text\",\"text\"} object", i)
			}
			if (part.Type == "text" || part.Type == "") && part.Text != nil {
				texts = append(texts, *part.Text)
				continue
			}
			skipped++
		}
		return strings.Join(texts, "\n"), skipped, nil
	}
	return "", 0, errors.New("must be a string or a list of text parts")
}

// ReadMessages reads §4.2 L0 input: an object {"session_id", "scope",
// "messages": [...]}, or a stream of message objects (JSONL, or a JSON
// array) for the session sessionID. Each message needs role (user or
// assistant) and content (a string or text parts); id and timestamp are
// optional (a missing id stays empty: the recorder generates one). The
// object's session_id wins over sessionID; scope is nil when the input gives
// none. A missing or invalid field is an error of kind ErrInvalid naming it,
// e.g. `messages[1].role: required`.
func ReadMessages(r io.Reader, file string, sessionID string) (string, *imprint.Scope, []imprint.Message, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", nil, nil, fmt.Errorf("read %s: %w", file, err)
	}
	items, err := splitDocument(data, file, "messages")
	if err != nil {
		return "", nil, nil, err
	}
	var scope *imprint.Scope
	if len(items) == 1 && items[0].label == "" && hasKey(items[0].raw, "messages") {
		var obj struct {
			SessionID *string         `json:"session_id"`
			Scope     *imprint.Scope  `json:"scope"`
			Messages  json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(items[0].raw, &obj); err != nil {
			return "", nil, nil, invalidAt(file, "", "malformed messages object: "+jsonErrField(err))
		}
		if obj.SessionID != nil && strings.TrimSpace(*obj.SessionID) != "" {
			sessionID = strings.TrimSpace(*obj.SessionID)
		}
		scope = obj.Scope
		var msgs []json.RawMessage
		if m := bytes.TrimSpace(obj.Messages); len(m) == 0 || m[0] != '[' || json.Unmarshal(m, &msgs) != nil {
			return "", nil, nil, invalidAt(file, "messages", "must be a list of messages")
		}
		items = items[:0]
		for i, m := range msgs {
			items = append(items, docItem{raw: m, label: fmt.Sprintf("messages[%d]", i)})
		}
	}
	sessionID = strings.TrimSpace(sessionID)
	if sessionID == "" {
		return "", nil, nil, invalidAt(file, "session_id", "required (in the input, or --session for a message stream)")
	}
	out := make([]imprint.Message, 0, len(items))
	for _, it := range items {
		m, err := parseMessage(it, file)
		if err != nil {
			return "", nil, nil, err
		}
		m.SessionID = sessionID
		if scope != nil {
			m.Scope = *scope
		}
		out = append(out, m)
	}
	return sessionID, scope, out, nil
}

func parseMessage(it docItem, file string) (imprint.Message, error) {
	fail := func(name, format string, args ...any) error {
		return invalidAt(file, field(it.label, name), fmt.Sprintf(format, args...))
	}
	var in messageIn
	if raw := bytes.TrimSpace(it.raw); len(raw) == 0 || raw[0] != '{' {
		return imprint.Message{}, invalidAt(file, it.label, "a message must be a JSON object")
	}
	if err := json.Unmarshal(it.raw, &in); err != nil {
		return imprint.Message{}, invalidAt(file, it.label, "malformed message: "+jsonErrField(err))
	}
	if in.Role == nil || *in.Role == "" {
		return imprint.Message{}, fail("role", "required")
	}
	role := imprint.Role(*in.Role)
	if role != imprint.RoleUser && role != imprint.RoleAssistant {
		return imprint.Message{}, fail("role", "must be user or assistant, not %q", *in.Role)
	}
	if c := bytes.TrimSpace(in.Content); len(c) == 0 || string(c) == "null" {
		return imprint.Message{}, fail("content", "required")
	}
	content, _, err := partsText(in.Content)
	if err != nil {
		return imprint.Message{}, fail("content", "%v", err)
	}
	m := imprint.Message{ID: strings.TrimSpace(in.ID), Role: role, Content: content}
	if len(in.Timestamp) > 0 {
		if err := m.Timestamp.UnmarshalJSON(in.Timestamp); err != nil {
			return imprint.Message{}, fail("timestamp", "%v", err)
		}
	}
	return m, nil
}

// hasKey reports whether raw is a JSON object with the key.
func hasKey(raw json.RawMessage, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// ReadImprint reads imprint's own JSON for `imprint import --format
// imprint`: §4.1 episodes (grouped into one transcript per session, their
// user and assistant text as L0 messages) or §4.2 messages (a messages
// object, or a stream of message objects whose session is the file's base
// name). Messages without an id get one derived from (session, episode,
// position, content), so importing the file again records nothing new;
// episodes without an id keep it empty for capture to derive. Invalid input
// is an error of kind ErrInvalid naming the field.
func ReadImprint(r io.Reader, file string) ([]Transcript, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	items, err := splitDocument(data, file, "episodes")
	if err != nil {
		return nil, err
	}
	isMessages := len(items) > 0 && !hasKey(items[0].raw, "turns") &&
		(hasKey(items[0].raw, "messages") || hasKey(items[0].raw, "role"))
	if isMessages {
		session := sessionFromFile(file)
		if session == "" {
			session = contentHashSession(SourceImprint, data)
		}
		sid, _, msgs, err := ReadMessages(bytes.NewReader(data), file, session)
		if err != nil {
			return nil, err
		}
		for i := range msgs {
			if msgs[i].ID == "" {
				msgs[i].ID = derivedID(SourceImprint, sid, "message", strconv.Itoa(i), string(msgs[i].Role), msgs[i].Content)
			}
		}
		return []Transcript{{Source: SourceImprint, SessionID: sid, Messages: msgs}}, nil
	}
	eps, warnings, err := ReadEpisodes(bytes.NewReader(data), file)
	if err != nil {
		return nil, err
	}
	var out []Transcript
	index := map[string]int{}
	for _, ep := range eps {
		i, ok := index[ep.SessionID]
		if !ok {
			i = len(out)
			index[ep.SessionID] = i
			out = append(out, Transcript{Source: SourceImprint, SessionID: ep.SessionID})
		}
		epKey := ep.ID
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
