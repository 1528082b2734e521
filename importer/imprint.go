package importer

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

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
	Speaker   string          `json:"speaker"`
}

// docItem is one JSON value of an input document and where it came from.
type docItem struct {
	raw   json.RawMessage
	label string // "episodes[2]", "line 3", or "" for a single object
	// line is the line reported with the item's warnings (0 for a single
	// object); start is the line on which raw starts.
	line, start int
	// pos is the item's place among the document's values, counting the
	// malformed lines a lenient read skipped, so that it does not change
	// when such a line is mended.
	pos int
	// elem marks an element of a top-level array, labelled by
	// splitDocument's arrayName and its pos.
	elem bool
}

// relabel names the array elements of items as elements of arrayName.
func relabel(items []docItem, arrayName string) {
	for i := range items {
		if items[i].elem {
			items[i].label = fmt.Sprintf("%s[%d]", arrayName, items[i].pos)
		}
	}
}

// splitDocument reads one JSON object, a JSON array, or JSONL. arrayName
// labels array elements ("episodes" → "episodes[2]"). Array elements and
// JSONL lines carry the line they start on. A malformed JSONL line is an
// error naming the line; with lenient it is a warning naming file and line
// instead, and the other lines are still read.
func splitDocument(data []byte, file, arrayName string, lenient bool) ([]docItem, []Warning, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	// Lines are counted in the file as given: blank lines trimmed off the
	// front still count.
	rest := bytes.TrimLeftFunc(data, unicode.IsSpace)
	lead := bytes.Count(data[:len(data)-len(rest)], []byte("\n"))
	data = bytes.TrimRightFunc(rest, unicode.IsSpace)
	if len(data) == 0 {
		return nil, nil, invalidAt(file, "", "empty input")
	}
	if json.Valid(data) {
		if err := checkDocument(data, file); err != nil {
			return nil, nil, err
		}
		switch data[0] {
		case '{':
			return []docItem{{raw: data, start: lead + 1}}, nil, nil
		case '[':
			var elems []json.RawMessage
			if err := json.Unmarshal(data, &elems); err != nil {
				return nil, nil, invalidAt(file, "", err.Error())
			}
			lines := elementLines(data, "")
			items := make([]docItem, len(elems))
			for i, e := range elems {
				items[i] = docItem{raw: e, label: fmt.Sprintf("%s[%d]", arrayName, i), pos: i, elem: true}
				if i < len(lines) {
					items[i].line = lead + lines[i]
					items[i].start = items[i].line
				}
			}
			return items, nil, nil
		}
		return nil, nil, invalidAt(file, "", "expected a JSON object, an array or JSONL")
	}
	if !looksLikeJSONL(data, lenient) {
		// Not JSONL either: report where the document breaks.
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset > 0 && se.Offset <= int64(len(data)) {
			line := lead + 1 + bytes.Count(data[:se.Offset-1], []byte("\n"))
			return nil, nil, invalidAt(file, "line "+strconv.Itoa(line), "malformed JSON: "+se.Error())
		}
		return nil, nil, invalidAt(file, "", "malformed JSON")
	}
	var items []docItem
	var warnings []Warning
	var bad error
	pos := 0
	err := eachLine(bytes.NewReader(data), func(n int, raw []byte, tooLong bool) {
		if bad != nil {
			return
		}
		n += lead
		label := "line " + strconv.Itoa(n)
		problem := ""
		switch raw = bytes.TrimSpace(raw); {
		case tooLong:
			problem = "line too long"
		case len(raw) == 0:
			return
		case !json.Valid(raw):
			problem = "malformed JSON"
		default:
			problem = lineProblem(raw)
		}
		pos++
		if problem == "" {
			items = append(items, docItem{raw: append(json.RawMessage(nil), raw...), label: label, line: n, start: n, pos: pos - 1})
			return
		}
		if !lenient {
			bad = invalidAt(file, label, problem)
			return
		}
		warnings = append(warnings, Warning{File: file, Line: n, Message: problem + ": line skipped"})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", file, err)
	}
	if bad != nil {
		return nil, nil, bad
	}
	return items, warnings, nil
}

// looksLikeJSONL reports whether data, which is not one JSON value, is read
// as JSONL: its first line is a JSON value, or (lenient) at least half of
// its non-blank lines are JSON objects, so a JSONL file whose first line is
// broken still imports while a broken pretty-printed document (lines like
// `{` and `"key": 1,`) does not pass for one.
func looksLikeJSONL(data []byte, lenient bool) bool {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if json.Valid(bytes.TrimSpace(first)) {
		return true
	}
	if !lenient {
		return false
	}
	lines, objects := 0, 0
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		lines++
		if line[0] == '{' && json.Valid(line) {
			objects++
		}
	}
	return objects > 0 && 2*objects >= lines
}

// elementLines returns the line (1-based, within data) on which each
// element starts of the JSON array data (key "") or of the array under key
// in the JSON object data. It returns what it found before any problem.
func elementLines(data []byte, key string) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	if key != "" {
		if tok != json.Delim('{') {
			return nil
		}
		for {
			if !dec.More() {
				return nil
			}
			k, err := dec.Token()
			if err != nil {
				return nil
			}
			if k == key {
				if tok, err = dec.Token(); err != nil {
					return nil
				}
				break
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
	}
	if tok != json.Delim('[') {
		return nil
	}
	var lines []int
	for dec.More() {
		off := int(dec.InputOffset())
		for off < len(data) && (data[off] == ',' || unicode.IsSpace(rune(data[off]))) {
			off++
		}
		lines = append(lines, 1+bytes.Count(data[:min(off, len(data))], []byte("\n")))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return lines
}

// skipped returns the warning for an item of a lenient read that was
// skipped for err (whose message names file, as invalidAt makes it).
func skipped(file string, it docItem, what string, err error) Warning {
	msg := err.Error()
	if file != "" && file != "-" {
		msg = strings.TrimPrefix(msg, file+": ")
	}
	return Warning{File: file, Line: it.line, Message: what + " skipped: " + msg}
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
	return readEpisodes(data, file, false)
}

// readEpisodes reads §4.1 episodes from data. With lenient, a malformed
// JSONL line or an unusable episode of a JSONL stream or array is skipped
// with a warning naming file and line; only input with nothing usable is
// an error.
func readEpisodes(data []byte, file string, lenient bool) ([]imprint.Episode, []Warning, error) {
	items, warnings, err := splitDocument(data, file, "episodes", lenient)
	if err != nil {
		return nil, nil, err
	}
	return parseEpisodes(items, warnings, file, lenient)
}

// parseEpisodes is readEpisodes on the items of a split document and the
// warnings of the split.
func parseEpisodes(items []docItem, warnings []Warning, file string, lenient bool) ([]imprint.Episode, []Warning, error) {
	var out []imprint.Episode
	var firstErr error
	for _, it := range items {
		ep, ws, err := parseEpisode(it, file)
		if err != nil {
			if !lenient || it.label == "" {
				return nil, nil, err
			}
			firstErr = cmp.Or(firstErr, err)
			warnings = append(warnings, skipped(file, it, "episode", err))
			continue
		}
		warnings = append(warnings, ws...)
		out = append(out, ep)
	}
	if len(out) == 0 && firstErr != nil {
		return nil, nil, firstErr
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
	if err := checkID(file, field(it.label, "session_id"), ep.SessionID); err != nil {
		return imprint.Episode{}, nil, err
	}
	if err := checkID(file, field(it.label, "id"), ep.ID); err != nil {
		return imprint.Episode{}, nil, err
	}
	if in.Scope != nil {
		ep.Scope = *in.Scope
		if err := checkScope(file, it.label, ep.Scope); err != nil {
			return imprint.Episode{}, nil, err
		}
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
		if err := checkID(file, field(it.label, name+".id"), t.ID); err != nil {
			return imprint.Episode{}, nil, err
		}
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

// MessageDoc is §4.2 L0 input as read.
type MessageDoc struct {
	SessionID string
	// Scope is nil when the input gives none.
	Scope *imprint.Scope
	// BetweenPeople is the messages object's "between_people": the
	// conversation is between people, not with an AI assistant
	// (imprint.Session.BetweenPeople). A message stream has no place for it.
	BetweenPeople bool
	Messages      []imprint.Message
}

// ReadMessageDoc reads §4.2 L0 input: an object {"session_id", "scope",
// "between_people", "messages": [...]}, or a stream of message objects
// (JSONL, or a JSON array) for the session sessionID. Each message needs
// role (user or assistant) and content (a string or text parts); id,
// timestamp and speaker are optional (a missing id stays empty: the
// recorder generates one). The object's session_id wins over sessionID. A
// missing or invalid field is an error of kind ErrInvalid naming it, e.g.
// `messages[1].role: required`.
func ReadMessageDoc(r io.Reader, file string, sessionID string) (MessageDoc, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return MessageDoc{}, fmt.Errorf("read %s: %w", file, err)
	}
	doc, _, _, err := readMessages(data, file, sessionID, false)
	return doc, err
}

// readMessages reads §4.2 messages from data. With lenient, a malformed
// JSONL line or an invalid message of a stream or of the messages list is
// skipped with a warning naming file and line; only input with nothing
// usable is an error. pos holds each message's place in the input, skipped
// ones counted.
func readMessages(data []byte, file string, sessionID string, lenient bool) (doc MessageDoc, pos []int, warnings []Warning, err error) {
	items, warnings, err := splitDocument(data, file, "messages", lenient)
	if err != nil {
		return MessageDoc{}, nil, nil, err
	}
	return parseMessages(items, warnings, file, sessionID, lenient)
}

// parseMessages is readMessages on the items of a split document (array
// elements labelled "messages[i]") and the warnings of the split.
func parseMessages(items []docItem, warnings []Warning, file string, sessionID string, lenient bool) (doc MessageDoc, pos []int, _ []Warning, err error) {
	if len(items) == 1 && items[0].label == "" && hasKey(items[0].raw, "messages") {
		var obj struct {
			SessionID     *string         `json:"session_id"`
			Scope         *imprint.Scope  `json:"scope"`
			BetweenPeople *bool           `json:"between_people"`
			Messages      json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(items[0].raw, &obj); err != nil {
			return MessageDoc{}, nil, nil, invalidAt(file, "", "malformed messages object: "+jsonErrField(err))
		}
		if obj.SessionID != nil && strings.TrimSpace(*obj.SessionID) != "" {
			sessionID = strings.TrimSpace(*obj.SessionID)
		}
		doc.Scope = obj.Scope
		if obj.Scope != nil {
			if err := checkScope(file, "", *obj.Scope); err != nil {
				return MessageDoc{}, nil, nil, err
			}
		}
		doc.BetweenPeople = obj.BetweenPeople != nil && *obj.BetweenPeople
		var msgs []json.RawMessage
		if m := bytes.TrimSpace(obj.Messages); len(m) == 0 || m[0] != '[' || json.Unmarshal(m, &msgs) != nil {
			return MessageDoc{}, nil, nil, invalidAt(file, "messages", "must be a list of messages")
		}
		lines := elementLines(items[0].raw, "messages")
		base := items[0].start - 1
		items = items[:0]
		for i, m := range msgs {
			it := docItem{raw: m, label: fmt.Sprintf("messages[%d]", i), pos: i}
			if i < len(lines) {
				it.line = base + lines[i]
				it.start = it.line
			}
			items = append(items, it)
		}
	}
	sessionID = strings.TrimSpace(sessionID)
	if sessionID == "" {
		return MessageDoc{}, nil, nil, invalidAt(file, "session_id", "required (in the input, or --session for a message stream)")
	}
	if err := checkID(file, "session_id", sessionID); err != nil {
		return MessageDoc{}, nil, nil, err
	}
	out := make([]imprint.Message, 0, len(items))
	var firstErr error
	for _, it := range items {
		m, err := parseMessage(it, file)
		if err != nil {
			if !lenient {
				return MessageDoc{}, nil, nil, err
			}
			firstErr = cmp.Or(firstErr, err)
			warnings = append(warnings, skipped(file, it, "message", err))
			continue
		}
		m.SessionID = sessionID
		if doc.Scope != nil {
			m.Scope = *doc.Scope
		}
		out = append(out, m)
		pos = append(pos, it.pos)
	}
	if len(out) == 0 && firstErr != nil {
		return MessageDoc{}, nil, nil, firstErr
	}
	doc.SessionID, doc.Messages = sessionID, out
	return doc, pos, warnings, nil
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
	m := imprint.Message{ID: strings.TrimSpace(in.ID), Role: role, Content: content, Speaker: strings.TrimSpace(in.Speaker)}
	if err := checkID(file, field(it.label, "id"), m.ID); err != nil {
		return imprint.Message{}, err
	}
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
// episodes without an id keep it empty for capture to derive. A malformed
// JSONL line and an unusable episode or message of a stream or list are
// skipped with a warning naming file and line (on the first transcript);
// the rest still imports. Input with nothing usable is an error of kind
// ErrInvalid naming the field.
func ReadImprint(r io.Reader, file string) ([]Transcript, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	// The document is split once, its array elements labelled as
	// episodes until it turns out to hold messages.
	items, warnings, err := splitDocument(data, file, "episodes", true)
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
		relabel(items, "messages")
		doc, pos, warnings, err := parseMessages(items, warnings, file, session, true)
		if err != nil {
			return nil, err
		}
		sid, msgs := doc.SessionID, doc.Messages
		for i := range msgs {
			if msgs[i].ID == "" {
				msgs[i].ID = derivedID(SourceImprint, sid, "message", strconv.Itoa(pos[i]), string(msgs[i].Role), msgs[i].Content)
			}
		}
		return []Transcript{{Source: SourceImprint, SessionID: sid, Messages: msgs, BetweenPeople: doc.BetweenPeople, Warnings: warnings}}, nil
	}
	eps, warnings, err := parseEpisodes(items, warnings, file, true)
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
