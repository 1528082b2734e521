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

// SourceChatGPT is the Source of transcripts read from a ChatGPT data export.
const SourceChatGPT = "chatgpt"

// cgConversation is one conversation of conversations.json.
type cgConversation struct {
	ID             string            `json:"id"`
	ConversationID string            `json:"conversation_id"`
	CurrentNode    string            `json:"current_node"`
	Mapping        map[string]cgNode `json:"mapping"`
}

// cgNode is one node of a conversation's message tree.
type cgNode struct {
	Parent   string          `json:"parent"`
	Children []string        `json:"children"`
	Message  json.RawMessage `json:"message"`
}

type cgMessage struct {
	ID     string `json:"id"`
	Author struct {
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"author"`
	Content    cgContent       `json:"content"`
	CreateTime json.RawMessage `json:"create_time"`
	Recipient  string          `json:"recipient"`
	Metadata   struct {
		Hidden bool `json:"is_visually_hidden_from_conversation"`
	} `json:"metadata"`
}

type cgContent struct {
	ContentType string            `json:"content_type"`
	Parts       []json.RawMessage `json:"parts"`
	Text        string            `json:"text"`
	Result      string            `json:"result"`
	Thoughts    []struct {
		Summary string `json:"summary"`
		Content string `json:"content"`
	} `json:"thoughts"`
}

// ReadChatGPT reads a ChatGPT export's conversations.json (an array of
// conversations, or one conversation object) and returns one transcript per
// conversation. The active thread is the path from current_node up through
// the parents (edited and regenerated branches are left out). System
// messages, hidden context and empty messages are skipped; an assistant
// message addressed to a tool (recipient other than "all") becomes a tool
// call whose output is the following tool message; "thoughts" go to the
// next assistant turn's Meta.Thinking. The session id is the conversation's
// conversation_id or id. Malformed conversations are warnings; input that is
// not a JSON array or object is an error of kind ErrInvalid.
func ReadChatGPT(r io.Reader, file string) ([]Transcript, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if err := checkDocument(data, file); err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	switch {
	case len(data) == 0:
		return nil, nil
	case data[0] == '[':
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, imprint.Invalidf("%s: not a ChatGPT export: %v", file, err)
		}
	case data[0] == '{':
		if !json.Valid(data) {
			return nil, imprint.Invalidf("%s: not a ChatGPT export: malformed JSON", file)
		}
		raws = []json.RawMessage{data}
	default:
		return nil, imprint.Invalidf("%s: not a ChatGPT export: expected a JSON array of conversations", file)
	}
	var out []Transcript
	var orphans []Warning
	base := sessionFromFile(file)
	seen := map[string]bool{}
	for i, raw := range raws {
		label := fmt.Sprintf("conversations[%d]", i)
		var c cgConversation
		if err := json.Unmarshal(raw, &c); err != nil {
			orphans = append(orphans, Warning{File: file, Message: label + ": malformed conversation: " + err.Error()})
			continue
		}
		if len(c.Mapping) == 0 {
			orphans = append(orphans, Warning{File: file, Message: label + ": mapping: required"})
			continue
		}
		id := strings.TrimSpace(c.ConversationID)
		if id == "" {
			id = strings.TrimSpace(c.ID)
		}
		if id == "" {
			if base == "" {
				base = imprint.ContentID(SourceChatGPT, data)
			}
			id = base + "-" + strconv.Itoa(i+1)
		}
		if seen[id] {
			orphans = append(orphans, Warning{File: file, Message: fmt.Sprintf("%s: duplicate conversation %q skipped", label, id)})
			continue
		}
		seen[id] = true
		out = append(out, readChatGPTConversation(c, id, label, file))
	}
	if len(orphans) > 0 {
		if len(out) == 0 {
			out = append(out, Transcript{Source: SourceChatGPT})
		}
		out[0].Warnings = append(out[0].Warnings, orphans...)
	}
	return cleanTranscripts(out, file)
}

// cgThread returns the node ids from the root to current_node. Without a
// usable current_node it follows the last child from the root.
func cgThread(c cgConversation) []string {
	var path []string
	seen := map[string]bool{}
	if _, ok := c.Mapping[c.CurrentNode]; ok {
		for cur := c.CurrentNode; cur != "" && !seen[cur]; {
			n, ok := c.Mapping[cur]
			if !ok {
				break
			}
			seen[cur] = true
			path = append(path, cur)
			cur = n.Parent
		}
		for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
			path[i], path[j] = path[j], path[i]
		}
		return path
	}
	root := ""
	for id, n := range c.Mapping {
		if _, ok := c.Mapping[n.Parent]; n.Parent == "" || !ok {
			if root == "" || id < root {
				root = id
			}
		}
	}
	for cur := root; cur != "" && !seen[cur]; {
		n, ok := c.Mapping[cur]
		if !ok {
			break
		}
		seen[cur] = true
		path = append(path, cur)
		cur = ""
		if len(n.Children) > 0 {
			cur = n.Children[len(n.Children)-1]
		}
	}
	return path
}

func readChatGPTConversation(c cgConversation, sessionID, label, file string) Transcript {
	var warnings []Warning
	b := newTurnBuilder(SourceChatGPT, sessionID)
	var thinking []string
	for _, nodeID := range cgThread(c) {
		raw := bytes.TrimSpace(c.Mapping[nodeID].Message)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var m cgMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			warnings = append(warnings, Warning{File: file, Message: fmt.Sprintf("%s.mapping[%q]: malformed message: %v", label, nodeID, err)})
			continue
		}
		if m.Metadata.Hidden {
			continue
		}
		key := m.ID
		if key == "" {
			key = nodeID
		}
		ts := cgTime(m.CreateTime)
		text := cgText(m.Content)
		switch m.Content.ContentType {
		case "thoughts":
			thinking = append(thinking, text)
			continue
		case "reasoning_recap", "user_editable_context", "model_editable_context":
			continue
		}
		switch m.Author.Role {
		case "user":
			b.user(key, text, ts)
		case "assistant":
			to := m.Recipient
			if to == "" || to == "all" {
				b.assistant(key, text, joinText(thinking), ts, 0)
			} else {
				b.assistant(key, "", joinText(thinking), ts, 1)
				b.call(key, to, stringInput(text), ts)
			}
			thinking = nil
		case "tool":
			id, ok := b.lastCall(m.Author.Name)
			if !ok && len(b.pending) == 1 {
				for pid := range b.pending {
					id = pid
				}
			}
			if strings.TrimSpace(text) == "" && id == "" {
				continue
			}
			b.result(id, m.Author.Name, text, "", ts)
		}
	}
	return transcriptOf(SourceChatGPT, sessionID, b.turns, warnings)
}

// cgTime reads create_time: epoch seconds (a number), or a time string.
func cgTime(raw json.RawMessage) imprint.Time {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return imprint.Time{}
	}
	var sec float64
	if json.Unmarshal(raw, &sec) == nil {
		if sec <= 0 || sec > 1e11 { // not seconds since 1970 up to year 5000
			return imprint.Time{}
		}
		return imprint.FromEpochMillis(sec * 1000)
	}
	var t imprint.Time
	if t.UnmarshalJSON(raw) != nil {
		return imprint.Time{}
	}
	return t
}

// cgText is the readable text of a message's content.
func cgText(c cgContent) string {
	var texts []string
	for _, p := range c.Parts {
		var s string
		if json.Unmarshal(p, &s) == nil {
			texts = append(texts, s)
			continue
		}
		var obj struct {
			ContentType string `json:"content_type"`
			Text        string `json:"text"`
		}
		if json.Unmarshal(p, &obj) == nil {
			switch {
			case strings.Contains(obj.ContentType, "image"):
				texts = append(texts, "[image]")
			case strings.Contains(obj.ContentType, "audio"):
				if obj.Text != "" {
					texts = append(texts, obj.Text)
				}
			case obj.Text != "":
				texts = append(texts, obj.Text)
			}
		}
	}
	if c.Text != "" {
		texts = append(texts, c.Text)
	}
	if c.Result != "" {
		texts = append(texts, c.Result)
	}
	for _, th := range c.Thoughts {
		texts = append(texts, joinText([]string{th.Summary, th.Content}))
	}
	return joinText(texts)
}
