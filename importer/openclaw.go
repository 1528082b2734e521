package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// SourceOpenClaw is the Source of transcripts read from OpenClaw sessions.
const SourceOpenClaw = "openclaw"

// ocEntry is one line of an OpenClaw session file: the session header
// (type "session"), a message, or another event (model_change,
// thinking_level_change, custom, …) that only matters for the parent chain.
type ocEntry struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	ParentID  string          `json:"parentId"`
	Timestamp json.RawMessage `json:"timestamp"`
	Message   json.RawMessage `json:"message"`
	// Cwd is the session header's working directory: the project.
	Cwd string `json:"cwd"`
}

// ocMessage is the message of a "message" entry.
type ocMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	ToolCallID   string          `json:"toolCallId"`
	ToolName     string          `json:"toolName"`
	IsError      bool            `json:"isError"`
	Timestamp    json.RawMessage `json:"timestamp"`
	ErrorMessage string          `json:"errorMessage"`
}

// ocBlock is one content block: text, thinking, toolCall or image.
type ocBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ocRecord is a usable message entry.
type ocRecord struct {
	line   int
	id     string
	ts     imprint.Time
	msg    ocMessage
	text   string
	blocks []ocBlock
}

// ReadOpenClaw reads one OpenClaw session file (JSONL): a header line
// {"type":"session","id",…} and then entries, of which "message" entries
// (roles user, assistant, toolResult) become turns. When entries carry
// id/parentId links, only the branch ending at the last message is imported.
// Assistant toolCall blocks become tool turns paired with the toolResult of
// the same toolCallId (isError sets Meta.Error); thinking blocks go to the
// turn's Meta.Thinking. The session id is the header's id, else the file's
// base name. Malformed lines and unknown roles are warnings; input with no
// JSON object line at all is an error of kind ErrInvalid.
func ReadOpenClaw(r io.Reader, file string) (Transcript, error) {
	var warnings []Warning
	warn := func(line int, format string, args ...any) {
		warnings = append(warnings, Warning{File: file, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	var recs []*ocRecord
	var nodes []chainNode
	sessionID, cwd := "", ""
	linked := false
	unknownRoles := map[string][]int{}
	nonEmpty, objects, err := eachJSONObject(r, warn, func(n int, e *ocEntry) {
		if e.ParentID != "" {
			linked = true
		}
		if e.Type == "session" {
			if sessionID == "" {
				sessionID = strings.TrimSpace(e.ID)
			}
			if cwd == "" {
				cwd = strings.TrimSpace(e.Cwd)
			}
			return
		}
		if e.ID != "" {
			nodes = append(nodes, chainNode{id: e.ID, parent: e.ParentID})
		}
		switch e.Type {
		case "message":
		case "":
			warn(n, "line has no type")
			return
		default:
			return
		}
		rec := &ocRecord{line: n, id: e.ID}
		m := bytes.TrimSpace(e.Message)
		if len(m) == 0 || m[0] != '{' || json.Unmarshal(m, &rec.msg) != nil {
			warn(n, "message entry without a message object")
			return
		}
		if len(e.Timestamp) > 0 && rec.ts.UnmarshalJSON(e.Timestamp) != nil {
			rec.ts = imprint.Time{}
		}
		if rec.ts.IsZero() && len(rec.msg.Timestamp) > 0 && rec.ts.UnmarshalJSON(rec.msg.Timestamp) != nil {
			rec.ts = imprint.Time{}
		}
		switch rec.msg.Role {
		case "user", "assistant", "toolResult":
		default:
			unknownRoles[rec.msg.Role] = append(unknownRoles[rec.msg.Role], n)
			return
		}
		if msg := ocContent(rec); msg != "" {
			warn(n, "%s", msg)
			return
		}
		recs = append(recs, rec)
	})
	if err != nil {
		return Transcript{}, fmt.Errorf("read %s: %w", file, err)
	}
	if nonEmpty > 0 && objects == 0 {
		return Transcript{}, imprint.Invalidf("%s: not an OpenClaw session: no JSON object line", file)
	}
	roles := make([]string, 0, len(unknownRoles))
	for role := range unknownRoles {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	for _, role := range roles {
		lines := unknownRoles[role]
		warn(lines[0], "%d message(s) with role %q skipped", len(lines), role)
	}
	if sessionID == "" {
		sessionID = sessionFromFile(file)
	}
	if sessionID == "" {
		sessionID = "openclaw"
	}

	// Entries form a tree through parentId; every sibling of the active
	// chain starts an abandoned branch.
	var dropped map[string]bool
	if linked {
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].id != "" {
				path := chainPath(nodes, recs[i].id)
				dropped = abandonedBranches(nodes, path, func(chainNode) bool { return true })
				break
			}
		}
	}

	b := newTurnBuilder(SourceOpenClaw, sessionID)
	for _, rec := range recs {
		if rec.id != "" && dropped[rec.id] {
			continue
		}
		key := rec.id
		if key == "" {
			key = fmt.Sprintf("line-%d", rec.line)
		}
		switch rec.msg.Role {
		case "user":
			b.user(key, joinText(ocParts(rec)), rec.ts)
		case "assistant":
			var texts, thinking []string
			var calls []ocBlock
			if rec.text != "" {
				texts = append(texts, rec.text)
			}
			for _, bl := range rec.blocks {
				switch bl.Type {
				case "text":
					texts = append(texts, bl.Text)
				case "thinking":
					thinking = append(thinking, bl.Thinking)
				case "toolCall", "tool_use":
					calls = append(calls, bl)
				}
			}
			b.assistant(key, joinText(texts), joinText(thinking), rec.ts, len(calls))
			for _, c := range calls {
				b.call(c.ID, c.Name, toolInput(c.Arguments), rec.ts)
			}
		case "toolResult":
			parts := ocParts(rec)
			out := strings.Join(parts, "\n")
			errText := ""
			if rec.msg.IsError {
				errText = strings.TrimSpace(out)
				if errText == "" {
					errText = "error"
				}
			}
			b.result(rec.msg.ToolCallID, rec.msg.ToolName, out, errText, rec.ts)
		}
	}
	sortWarnings(warnings)
	tr := transcriptOf(SourceOpenClaw, sessionID, b.turns, warnings)
	tr.Workspace = cwd
	return cleanTranscript(tr, file)
}

// ocContent decodes a message's content (a string or a list of blocks) into
// rec; it returns a warning when the content is unusable.
func ocContent(rec *ocRecord) string {
	c := bytes.TrimSpace(rec.msg.Content)
	switch {
	case len(c) == 0 || string(c) == "null":
		if rec.msg.Role == "assistant" || rec.msg.Role == "toolResult" {
			return "" // an assistant error reply or an empty tool result
		}
		return rec.msg.Role + " message has no content"
	case c[0] == '"':
		if json.Unmarshal(c, &rec.text) != nil {
			return rec.msg.Role + " message: malformed content"
		}
	case c[0] == '[':
		var elems []json.RawMessage
		if json.Unmarshal(c, &elems) != nil {
			return rec.msg.Role + " message: malformed content"
		}
		for _, e := range elems {
			var bl ocBlock
			if e = bytes.TrimSpace(e); len(e) == 0 || e[0] != '{' || json.Unmarshal(e, &bl) != nil || bl.Type == "" {
				continue
			}
			rec.blocks = append(rec.blocks, bl)
		}
		if len(rec.blocks) == 0 && len(elems) > 0 {
			return rec.msg.Role + " message: no usable content block"
		}
	default:
		return rec.msg.Role + " message: content is neither text nor a list of blocks"
	}
	return ""
}

// ocParts returns the text of a user or tool-result record: its plain text,
// then its text blocks, with "[image]" standing for each image block.
func ocParts(rec *ocRecord) []string {
	var parts []string
	if rec.text != "" {
		parts = append(parts, rec.text)
	}
	for _, bl := range rec.blocks {
		switch bl.Type {
		case "text":
			parts = append(parts, bl.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return parts
}
