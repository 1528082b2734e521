package wire

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// messageIn is a §4.2 message as read.
type messageIn struct {
	ID        string          `json:"id"`
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	Timestamp json.RawMessage `json:"timestamp"`
	Speaker   string          `json:"speaker"`
	Workspace string          `json:"workspace"`
}

// MessageDoc is §4.2 L0 input as read.
type MessageDoc struct {
	SessionID string
	// Scope is nil when the input gives none.
	Scope *imprint.Scope
	// Workspace is the object's "workspace", the project of its messages
	// that name none ("" for none).
	Workspace string
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
	if len(items) == 1 && items[0].label == "" && HasKey(items[0].raw, "messages") {
		var obj struct {
			SessionID     *string         `json:"session_id"`
			Scope         *imprint.Scope  `json:"scope"`
			Workspace     string          `json:"workspace"`
			BetweenPeople *bool           `json:"between_people"`
			Messages      json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(items[0].raw, &obj); err != nil {
			return MessageDoc{}, nil, nil, Invalid(file, "", "malformed messages object: "+jsonErrField(err))
		}
		if obj.SessionID != nil && strings.TrimSpace(*obj.SessionID) != "" {
			sessionID = strings.TrimSpace(*obj.SessionID)
		}
		doc.Scope = obj.Scope
		if obj.Scope != nil {
			if err := CheckScope(file, "", *obj.Scope); err != nil {
				return MessageDoc{}, nil, nil, err
			}
		}
		doc.Workspace = strings.TrimSpace(obj.Workspace)
		if err := CheckID(file, "workspace", doc.Workspace); err != nil {
			return MessageDoc{}, nil, nil, err
		}
		doc.BetweenPeople = obj.BetweenPeople != nil && *obj.BetweenPeople
		var msgs []json.RawMessage
		if m := bytes.TrimSpace(obj.Messages); len(m) == 0 || m[0] != '[' || json.Unmarshal(m, &msgs) != nil {
			return MessageDoc{}, nil, nil, Invalid(file, "messages", "must be a list of messages")
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
		return MessageDoc{}, nil, nil, Invalid(file, "session_id", "required (in the input, or --session for a message stream)")
	}
	if err := CheckID(file, "session_id", sessionID); err != nil {
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
		if m.Workspace == "" {
			m.Workspace = doc.Workspace
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
		return Invalid(file, Field(it.label, name), fmt.Sprintf(format, args...))
	}
	var in messageIn
	if raw := bytes.TrimSpace(it.raw); len(raw) == 0 || raw[0] != '{' {
		return imprint.Message{}, Invalid(file, it.label, "a message must be a JSON object")
	}
	if err := json.Unmarshal(it.raw, &in); err != nil {
		return imprint.Message{}, Invalid(file, it.label, "malformed message: "+jsonErrField(err))
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
	m := imprint.Message{ID: strings.TrimSpace(in.ID), Role: role, Content: content, Speaker: strings.TrimSpace(in.Speaker),
		Workspace: strings.TrimSpace(in.Workspace)}
	if err := CheckID(file, Field(it.label, "id"), m.ID); err != nil {
		return imprint.Message{}, err
	}
	if err := CheckID(file, Field(it.label, "workspace"), m.Workspace); err != nil {
		return imprint.Message{}, err
	}
	if len(in.Timestamp) > 0 {
		if err := m.Timestamp.UnmarshalJSON(in.Timestamp); err != nil {
			return imprint.Message{}, fail("timestamp", "%v", err)
		}
	}
	return m, nil
}
