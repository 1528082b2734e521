package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// SourceOpenAI is the Source of transcripts read from OpenAI chat-format
// message lists.
const SourceOpenAI = "openai"

// oaMessage is one chat message in the OpenAI format.
type oaMessage struct {
	ID           string          `json:"id"`
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	ToolCalls    []oaToolCall    `json:"tool_calls"`
	FunctionCall *oaFunction     `json:"function_call"`
	ToolCallID   string          `json:"tool_call_id"`
	Name         string          `json:"name"`
	Timestamp    json.RawMessage `json:"timestamp"`
}

type oaToolCall struct {
	ID       string     `json:"id"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// oaConversation is one conversation: its messages and the id it names.
type oaConversation struct {
	id       string
	label    string // where it is in the file, for warnings
	line     int
	messages []json.RawMessage
}

// ReadOpenAIChat reads conversations in the OpenAI chat format: a JSON array
// of messages ({role, content (string or parts), tool_calls, tool_call_id,
// name}) or an object {"messages": [...]} is one transcript; a JSON array of
// such objects, or JSONL with one object per line, is one transcript each
// (JSONL of bare messages is one transcript). System and developer messages
// are left out; an assistant's tool_calls become tool turns paired with the
// tool messages answering them. The session id is the conversation's
// session_id / conversation_id / id, else the file's base name (with the
// conversation's position when there are several), else a hash of the
// content. Malformed messages are warnings; input that is not JSON is an
// error of kind ErrInvalid. τ-bench trajectories are read by ReadTauBench.
func ReadOpenAIChat(r io.Reader, file string) ([]Transcript, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	convs, warnings, err := oaConversations(data, file)
	if err != nil {
		return nil, err
	}
	base := sessionFromFile(file)
	var out []Transcript
	for i, c := range convs {
		id := c.id
		switch {
		case id != "":
		case base != "" && len(convs) == 1:
			id = base
		case base != "":
			id = base + "-" + strconv.Itoa(i+1)
		default:
			id = imprint.ContentID(SourceOpenAI, data)
			if len(convs) > 1 {
				id += "-" + strconv.Itoa(i+1)
			}
		}
		out = append(out, readOpenAIConversation(c, id, file))
	}
	if len(warnings) > 0 {
		if len(out) == 0 {
			out = append(out, Transcript{Source: SourceOpenAI})
		}
		out[0].Warnings = append(warnings, out[0].Warnings...)
	}
	return cleanTranscripts(out, file)
}

// oaConversations splits the input into conversations.
func oaConversations(data []byte, file string) ([]oaConversation, []Warning, error) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 {
		return nil, nil, nil
	}
	var whole json.RawMessage
	if json.Unmarshal(trimmed, &whole) == nil {
		switch trimmed[0] {
		case '[':
			var elems []json.RawMessage
			if err := json.Unmarshal(trimmed, &elems); err != nil {
				return nil, nil, imprint.Invalidf("%s: malformed JSON array: %v", file, err)
			}
			if len(elems) > 0 && hasKey(elems[0], "traj") {
				return nil, nil, imprint.Invalidf("%s: τ-bench trajectories, not a chat message list (read them with ReadTauBench)", file)
			}
			for _, e := range elems {
				if oaIsMessage(e) {
					return []oaConversation{{label: "messages", messages: elems}}, nil, nil
				}
			}
			var convs []oaConversation
			var warns []Warning
			for i, e := range elems {
				c, ok := oaConversationOf(e, fmt.Sprintf("[%d]", i))
				if !ok {
					warns = append(warns, Warning{File: file, Message: fmt.Sprintf("[%d]: not a conversation (a message list or an object with messages)", i)})
					continue
				}
				convs = append(convs, c)
			}
			return convs, warns, nil
		case '{':
			c, ok := oaConversationOf(trimmed, "")
			if !ok {
				return nil, nil, imprint.Invalidf("%s: messages: required (a list of chat messages)", file)
			}
			return []oaConversation{c}, nil, nil
		}
		return nil, nil, imprint.Invalidf("%s: not an OpenAI chat file: expected a JSON array or object", file)
	}
	// JSONL: conversations, or the messages of one conversation.
	var convs []oaConversation
	var loose oaConversation
	var warns []Warning
	objects := 0
	err := eachLine(bytes.NewReader(trimmed), func(n int, raw []byte, tooLong bool) {
		raw = bytes.TrimSpace(raw)
		if tooLong {
			warns = append(warns, Warning{File: file, Line: n, Message: "line too long"})
			return
		}
		if len(raw) == 0 {
			return
		}
		if raw[0] != '{' && raw[0] != '[' || !json.Valid(raw) {
			warns = append(warns, Warning{File: file, Line: n, Message: "not a JSON object"})
			return
		}
		if p := lineProblem(raw); p != "" {
			warns = append(warns, Warning{File: file, Line: n, Message: p + ": line skipped"})
			return
		}
		objects++
		if raw[0] == '{' && oaIsMessage(raw) {
			if loose.line == 0 {
				loose.line = n
				loose.label = fmt.Sprintf("line %d", n)
			}
			loose.messages = append(loose.messages, raw)
			return
		}
		c, ok := oaConversationOf(raw, fmt.Sprintf("line %d", n))
		if !ok {
			warns = append(warns, Warning{File: file, Line: n, Message: "neither a chat message nor a conversation"})
			return
		}
		c.line = n
		convs = append(convs, c)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", file, err)
	}
	if objects == 0 {
		return nil, nil, imprint.Invalidf("%s: not an OpenAI chat file: not JSON", file)
	}
	if len(loose.messages) > 0 {
		convs = append([]oaConversation{loose}, convs...)
	}
	return convs, warns, nil
}

// oaIsMessage reports whether raw is an object with a role.
func oaIsMessage(raw json.RawMessage) bool {
	var m struct {
		Role *string `json:"role"`
	}
	return json.Unmarshal(raw, &m) == nil && m.Role != nil
}

// oaConversationOf reads {"messages": [...], "session_id"|"conversation_id"|"id"}
// or a bare array of messages.
func oaConversationOf(raw json.RawMessage, label string) (oaConversation, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var msgs []json.RawMessage
		if json.Unmarshal(raw, &msgs) != nil {
			return oaConversation{}, false
		}
		return oaConversation{label: label, messages: msgs}, true
	}
	var c struct {
		SessionID      string            `json:"session_id"`
		ConversationID string            `json:"conversation_id"`
		ID             json.RawMessage   `json:"id"`
		Messages       []json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Messages == nil {
		return oaConversation{}, false
	}
	id := c.SessionID
	if id == "" {
		id = c.ConversationID
	}
	if id == "" && len(c.ID) > 0 {
		var s string
		if json.Unmarshal(c.ID, &s) == nil {
			id = s
		} else if bytes.IndexFunc(c.ID, func(r rune) bool { return r < '0' || r > '9' }) < 0 {
			id = string(c.ID)
		}
	}
	if label != "" {
		label += "."
	}
	return oaConversation{id: strings.TrimSpace(id), label: label + "messages", messages: c.Messages}, true
}

// readOpenAIConversation turns one conversation's messages into a
// transcript.
func readOpenAIConversation(c oaConversation, sessionID, file string) Transcript {
	var warnings []Warning
	warn := func(i int, format string, args ...any) {
		warnings = append(warnings, Warning{File: file, Line: c.line,
			Message: fmt.Sprintf("%s[%d]: ", c.label, i) + fmt.Sprintf(format, args...)})
	}
	b := newTurnBuilder(SourceOpenAI, sessionID)
	for i, raw := range c.messages {
		var m oaMessage
		if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
			warn(i, "not a chat message")
			continue
		}
		var ts imprint.Time
		if len(m.Timestamp) > 0 && ts.UnmarshalJSON(m.Timestamp) != nil {
			ts = imprint.Time{}
		}
		key := m.ID
		if key == "" {
			key = "m" + strconv.Itoa(i)
		}
		text := oaText(m.Content)
		switch m.Role {
		case "system", "developer":
		case "user":
			b.user(key, text, ts)
		case "assistant":
			calls := m.ToolCalls
			if m.FunctionCall != nil {
				calls = append(calls, oaToolCall{Function: *m.FunctionCall})
			}
			b.assistant(key, text, "", ts, len(calls))
			for j, tc := range calls {
				id := tc.ID
				if id == "" && m.FunctionCall != nil && j == len(calls)-1 {
					id = key + ":function_call"
				}
				b.call(id, tc.Function.Name, toolInput(tc.Function.Arguments), ts)
			}
		case "tool", "function":
			id := m.ToolCallID
			if id == "" && m.Name != "" {
				id, _ = b.lastCall(m.Name)
			}
			b.result(id, m.Name, text, "", ts)
		default:
			warn(i, "unknown role %q skipped", m.Role)
		}
	}
	return transcriptOf(SourceOpenAI, sessionID, b.turns, warnings)
}

// oaText is the text of a message's content: a string, or the text of its
// parts ({"type":"text"|"input_text"|"output_text","text"}); image parts
// become "[image]".
func oaText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
		var texts []string
		for _, p := range parts {
			var part struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			var s string
			switch {
			case json.Unmarshal(p, &s) == nil:
				texts = append(texts, s)
			case json.Unmarshal(p, &part) == nil:
				switch part.Type {
				case "text", "input_text", "output_text", "":
					texts = append(texts, part.Text)
				case "image_url", "input_image", "image":
					texts = append(texts, "[image]")
				}
			}
		}
		return joinText(texts)
	}
	return ""
}
