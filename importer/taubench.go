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

// SourceTauBench names τ-bench trajectories.
const SourceTauBench = "tau-bench"

// tauErrorPrefix starts the content of a τ-bench tool result that failed
// ("Error: not enough seats on flight HAT229").
const tauErrorPrefix = "Error:"

type tauEntry struct {
	TaskID json.RawMessage `json:"task_id"`
	Reward *float64        `json:"reward"`
	Trial  *int            `json:"trial"`
	Traj   []tauMessage    `json:"traj"`
}

type tauMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []tauToolCall   `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

type tauToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// ReadTauBench reads τ-bench trajectories (a JSON array of {task_id, reward,
// trial, traj}, or one such object; traj is an OpenAI chat message list).
// Each trajectory is one transcript with one episode: its session id is
// "tau-bench:<file base name>:task-<task_id>" (":trial-<n>" added for
// trials after the first), its reward and task id kept in the episode's
// meta. Assistant tool calls become tool turns right after their assistant
// turn (name, input, tool_call_id; the result's text as content and, when it
// starts with "Error:", as the error; a result is paired with its call by
// tool_call_id, or in order and by name for calls without an id), so an
// assistant message that only
// calls tools is an assistant turn with empty content. System messages are
// left out. L0 messages are the user and assistant text. Ids are derived
// from the file name and task, so reading the same file again gives the same
// ids. A malformed trajectory is reported as a warning (on the first
// transcript, or on a transcript with no session when none imports) and the
// rest still imports. Only input that is not a JSON array or object is an
// error (kind ErrInvalid).
func ReadTauBench(r io.Reader, file string) ([]Transcript, error) {
	return readTauBench(r, file, true)
}

// readTauBench is ReadTauBench; with whole unset, every entry is decoded
// alone (the path for files that do not decode in one pass), for tests to
// compare the two.
func readTauBench(r io.Reader, file string, whole bool) ([]Transcript, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if err := checkDocument(data, file); err != nil {
		return nil, err
	}
	// Most files decode in one pass; when one does not, each entry is
	// decoded alone, so that a bad one is a warning and the rest import.
	var decoded []tauEntry
	if whole {
		decoded, whole = decodeArray[tauEntry](bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	}
	var entries []json.RawMessage
	if !whole {
		if entries, err = tauEntries(data); err != nil {
			return nil, imprint.Invalidf("%s: not a τ-bench file: %v", file, err)
		}
	}
	base := sessionFromFile(file)
	if base == "" {
		base = imprint.ContentID("stdin", data)
	}
	var out []Transcript
	var orphans []Warning
	seen := map[string]bool{}
	for i := range max(len(decoded), len(entries)) {
		var e tauEntry
		if whole {
			e = decoded[i]
		} else if err := json.Unmarshal(entries[i], &e); err != nil {
			orphans = append(orphans, Warning{File: file, Message: fmt.Sprintf("trajectory %d: %v", i+1, err)})
			continue
		}
		taskID := tauTaskID(e.TaskID)
		if taskID == "" {
			taskID = strconv.Itoa(i)
		}
		sid := "tau-bench:" + base + ":task-" + taskID
		if e.Trial != nil && *e.Trial > 0 {
			sid += ":trial-" + strconv.Itoa(*e.Trial)
		}
		if seen[sid] {
			sid += ":entry-" + strconv.Itoa(i+1)
		}
		seen[sid] = true
		tr, ok := tauTranscript(e, sid, taskID, file, i)
		if !ok {
			orphans = append(orphans, tr.Warnings...)
			continue
		}
		out = append(out, tr)
	}
	if len(orphans) > 0 {
		if len(out) == 0 {
			out = append(out, Transcript{Source: SourceTauBench})
		}
		out[0].Warnings = append(out[0].Warnings, orphans...)
	}
	return cleanTranscripts(out, file)
}

func tauEntries(data []byte) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var one json.RawMessage
		if err := json.Unmarshal(trimmed, &one); err != nil {
			return nil, err
		}
		return []json.RawMessage{one}, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// tauTaskID renders a task id given as a number or a string.
func tauTaskID(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// tauText returns a message content given as a string, null, or a list of
// {"type": "text", "text": ...} parts (joined by a blank line).
func tauText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if s, ok := plainJSONString(raw); ok {
		return s, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither text nor a list of text parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "" || p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return joinText(texts), nil
}

// tauTranscript converts one trajectory. ok is false when nothing of it can
// be imported; its warnings say why.
func tauTranscript(e tauEntry, sid, taskID, file string, index int) (tr Transcript, ok bool) {
	tr = Transcript{Source: SourceTauBench, SessionID: sid}
	label := fmt.Sprintf("trajectory %d (task %s)", index+1, taskID)
	warn := func(format string, args ...any) {
		tr.Warnings = append(tr.Warnings, Warning{File: file, Message: label + ": " + fmt.Sprintf(format, args...)})
	}
	var turns []imprint.Turn
	pending := map[string]int{} // tool_call_id -> index of its tool turn awaiting a result
	var unnamed []int           // tool turns of calls without an id awaiting a result, in order
	for mi, m := range e.Traj {
		text, err := tauText(m.Content)
		if err != nil {
			warn("message %d: %v; skipped", mi+1, err)
			continue
		}
		switch m.Role {
		case "system":
			continue
		case "user":
			turns = append(turns, imprint.Turn{Role: imprint.RoleUser, Content: text})
		case "assistant":
			turns = append(turns, imprint.Turn{Role: imprint.RoleAssistant, Content: text})
			for _, c := range m.ToolCalls {
				name := strings.TrimSpace(c.Function.Name)
				if name == "" {
					warn("message %d: tool call without a name skipped", mi+1)
					continue
				}
				if c.ID != "" {
					pending[c.ID] = len(turns)
				} else {
					unnamed = append(unnamed, len(turns))
				}
				turns = append(turns, imprint.Turn{Role: imprint.RoleTool, Meta: imprint.TurnMeta{
					Name: name, Input: toolInput(c.Function.Arguments), ToolCallID: c.ID,
				}})
			}
		case "tool":
			meta := imprint.TurnMeta{Name: strings.TrimSpace(m.Name), ToolCallID: m.ToolCallID}
			if strings.HasPrefix(strings.TrimSpace(text), tauErrorPrefix) {
				meta.Error = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), tauErrorPrefix))
			}
			k, found := pending[m.ToolCallID]
			if found && m.ToolCallID != "" {
				delete(pending, m.ToolCallID)
			} else {
				k, found = takeUnanswered(&unnamed, turns, meta.Name)
			}
			if found {
				t := &turns[k]
				t.Content = text
				t.Meta.Error = meta.Error
				if t.Meta.Name == "" {
					t.Meta.Name = meta.Name
				}
				continue
			}
			if meta.Name == "" {
				meta.Name = "unknown_tool"
			}
			turns = append(turns, imprint.Turn{Role: imprint.RoleTool, Content: text, Meta: meta})
		default:
			warn("message %d: unknown role %q skipped", mi+1, m.Role)
		}
	}
	if len(turns) == 0 {
		warn("no user, assistant or tool messages")
		return tr, false
	}
	ep := imprint.Episode{
		ID:        derivedID(SourceTauBench, sid, "episode"),
		SessionID: sid,
		Status:    imprint.EpisodeFinalized,
		ClosedBy:  imprint.ClosedFinalized,
		Meta:      imprint.EpisodeMeta{Source: SourceTauBench, TaskID: taskID, Reward: e.Reward},
		Turns:     turns,
	}
	setEpisodeTimes(&ep)
	tr.Episodes = []imprint.Episode{ep}
	tr.Messages = MessagesFromTurns(sid, imprint.Scope{}, turns, SourceTauBench)
	return tr, true
}

// takeUnanswered removes from *open and returns the first tool turn (an
// index into turns) whose call has no id and the given name (any name when
// name is empty): results without a matching call id answer calls without
// one, in order.
func takeUnanswered(open *[]int, turns []imprint.Turn, name string) (int, bool) {
	for j, k := range *open {
		if name == "" || turns[k].Meta.Name == name {
			*open = append((*open)[:j:j], (*open)[j+1:]...)
			return k, true
		}
	}
	return 0, false
}
