package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// SourceClaudeCode is the Source of transcripts read from Claude Code
// sessions.
const SourceClaudeCode = "claude-code"

// ccLine is one line of a Claude Code session file, as far as it is read.
type ccLine struct {
	Type                      string          `json:"type"`
	UUID                      string          `json:"uuid"`
	ParentUUID                string          `json:"parentUuid"`
	LogicalParentUUID         string          `json:"logicalParentUuid"`
	IsSidechain               bool            `json:"isSidechain"`
	IsMeta                    bool            `json:"isMeta"`
	IsCompactSummary          bool            `json:"isCompactSummary"`
	IsVisibleInTranscriptOnly bool            `json:"isVisibleInTranscriptOnly"`
	IsAPIErrorMessage         bool            `json:"isApiErrorMessage"`
	SessionID                 string          `json:"sessionId"`
	AgentID                   string          `json:"agentId"`
	Timestamp                 json.RawMessage `json:"timestamp"`
	Message                   json.RawMessage `json:"message"`
	ToolUseResult             json.RawMessage `json:"toolUseResult"`
	// Cwd is the working directory of the line: the session's project.
	Cwd string `json:"cwd"`
}

// ccMessage is the Anthropic message inside a user or assistant line.
type ccMessage struct {
	ID      string          `json:"id"`
	Content json.RawMessage `json:"content"`
}

// ccBlock is one content block: text, thinking, tool_use, tool_result, image.
type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// ccRecord is a usable user or assistant line.
type ccRecord struct {
	line      int
	uuid      string
	parent    string
	side      bool
	meta      bool // a user line that is not a user request
	skip      bool // kept in the parent chain, but produces no turn
	ts        imprint.Time
	role      imprint.Role
	msgID     string
	text      string // string content
	blocks    []ccBlock
	sessionID string
	agentID   string // toolUseResult.agentId: the sub-agent a Task call ran
}

// ccSession is a parsed session file before it becomes a Transcript.
type ccSession struct {
	file     string
	id       string
	main     []imprint.Turn
	side     []ccSideRun // sub-agent turns, attached to episodes at the end
	spawns   map[string]string
	warnings []Warning
	// cwd is the first working directory of the session's own lines.
	cwd string
}

// ccSideRun is a run of sub-agent turns and the number of main turns that
// came before it (its anchor).
type ccSideRun struct {
	anchor int
	turns  []imprint.Turn
}

// ReadClaudeCode reads one Claude Code session file (JSONL). User and
// assistant lines become turns; summary, system, file-history-snapshot and
// other meta lines are skipped. Only the active branch of the parentUuid
// chain (the one ending at the last line) is imported: a rewind or a
// regenerated reply leaves the abandoned branch out. Assistant lines sharing
// a message id are merged; thinking goes to the turn's Meta.Thinking only;
// each tool_use becomes a tool turn paired with its tool_result (is_error
// sets Meta.Error). A user line marked isMeta, a compaction summary, local
// command output, or one that only carries tool results is not a user
// request and not an L0 message. Sub-agent (isSidechain) lines become turns
// with Meta.Depth 1 and IsSubagent appended to the episode that spawned them.
// The session id is the lines' sessionId (else the file's base name); lines
// of another session are skipped with a warning. Malformed lines are
// warnings; input with no JSON object line at all is an error of kind
// ErrInvalid.
func ReadClaudeCode(r io.Reader, file string) (Transcript, error) {
	s, err := parseClaudeCode(r, file, false)
	if err != nil {
		return Transcript{}, err
	}
	return cleanTranscript(s.transcript(), file)
}

// parseClaudeCode reads a session file. With subagentFile every line is a
// sub-agent's, whatever its isSidechain says.
func parseClaudeCode(r io.Reader, file string, subagentFile bool) (*ccSession, error) {
	s := &ccSession{file: file, spawns: map[string]string{}}
	warn := func(line int, format string, args ...any) {
		s.warnings = append(s.warnings, Warning{File: file, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	var recs []*ccRecord
	var nodes []chainNode // every line with a uuid, for the branch walk
	nonEmpty, objects, err := eachJSONObject(r, warn, func(n int, l *ccLine) {
		side := l.IsSidechain || subagentFile
		if s.cwd == "" && !side {
			s.cwd = strings.TrimSpace(l.Cwd)
		}
		parent := l.ParentUUID
		if parent == "" {
			parent = l.LogicalParentUUID
		}
		switch l.Type {
		case "user", "assistant":
		case "":
			warn(n, "line has no type")
			return
		default: // summary, system, file-history-snapshot, progress, attachment, …
			if l.UUID != "" && !side {
				nodes = append(nodes, chainNode{id: l.UUID, parent: parent, session: l.SessionID})
			}
			return
		}
		if err := checkID("", "sessionId", l.SessionID); err != nil {
			warn(n, "%v: line skipped", err)
			return
		}
		if err := checkID("", "uuid", l.UUID); err != nil {
			warn(n, "%v: line skipped", err)
			return
		}
		rec, msg := ccParseRecord(*l, n)
		if msg != "" {
			warn(n, "%s", msg)
			return
		}
		rec.side, rec.parent = side, parent
		recs = append(recs, rec)
		if rec.uuid != "" && !side {
			nodes = append(nodes, chainNode{id: rec.uuid, parent: parent, session: rec.sessionID, rec: rec})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if nonEmpty > 0 && objects == 0 {
		return nil, imprint.Invalidf("%s: not a Claude Code session: no JSON object line", file)
	}

	s.id = ccSessionID(recs, file)
	recs = s.dropForeign(recs)
	recs = ccDedupe(recs)
	dropped := ccAbandoned(recs, nodes, s.id)
	s.build(recs, dropped)
	return s, nil
}

// ccParseRecord decodes the message of a user or assistant line. msg is the
// warning when the line is unusable.
func ccParseRecord(l ccLine, n int) (*ccRecord, string) {
	rec := &ccRecord{line: n, uuid: l.UUID, role: imprint.Role(l.Type), sessionID: l.SessionID}
	if len(l.Timestamp) > 0 {
		if err := rec.ts.UnmarshalJSON(l.Timestamp); err != nil {
			rec.ts = imprint.Time{}
		}
	}
	m := bytes.TrimSpace(l.Message)
	if len(m) == 0 || m[0] != '{' {
		return nil, l.Type + " line: message is not an object"
	}
	var msg ccMessage
	if err := json.Unmarshal(m, &msg); err != nil {
		return nil, l.Type + " line: malformed message: " + err.Error()
	}
	rec.msgID = msg.ID
	c := bytes.TrimSpace(msg.Content)
	switch {
	case len(c) == 0 || string(c) == "null":
		return nil, l.Type + " line: message has no content"
	case c[0] == '"':
		if err := json.Unmarshal(c, &rec.text); err != nil {
			return nil, l.Type + " line: malformed content: " + err.Error()
		}
	case c[0] == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(c, &elems); err != nil {
			return nil, l.Type + " line: malformed content: " + err.Error()
		}
		for _, e := range elems {
			var b ccBlock
			if e = bytes.TrimSpace(e); len(e) == 0 || e[0] != '{' || json.Unmarshal(e, &b) != nil || b.Type == "" {
				continue
			}
			rec.blocks = append(rec.blocks, b)
		}
		if len(rec.blocks) == 0 && len(elems) > 0 {
			return nil, l.Type + " line: no usable content block"
		}
	default:
		return nil, l.Type + " line: content is neither text nor a list of blocks"
	}
	if l.Type == "user" {
		rec.meta = l.IsMeta || l.IsCompactSummary || l.IsVisibleInTranscriptOnly
		if len(l.ToolUseResult) > 0 && l.ToolUseResult[0] == '{' {
			var tr struct {
				AgentID string `json:"agentId"`
			}
			if json.Unmarshal(l.ToolUseResult, &tr) == nil {
				rec.agentID = tr.AgentID
			}
		}
	}
	// Synthetic API error replies are not the model's words; they stay in the
	// chain so the branch walk still passes through them.
	rec.skip = l.Type == "assistant" && l.IsAPIErrorMessage
	return rec, ""
}

// ccSessionID picks the session id. Claude Code names a session file after
// its session, so the file's base name wins when lines carry it; otherwise
// the most frequent sessionId (the later one on a tie), else the file name.
func ccSessionID(recs []*ccRecord, file string) string {
	base := sessionFromFile(file)
	count := map[string]int{}
	best := ""
	for _, r := range recs {
		if r.sessionID == "" {
			continue
		}
		if r.sessionID == base {
			return base
		}
		count[r.sessionID]++
		if count[r.sessionID] >= count[best] {
			best = r.sessionID
		}
	}
	if best != "" {
		return best
	}
	if base != "" {
		return base
	}
	return "claude-code"
}

// dropForeign removes lines of another session, with one warning per
// session.
func (s *ccSession) dropForeign(recs []*ccRecord) []*ccRecord {
	type foreign struct {
		first, count int
	}
	other := map[string]*foreign{}
	var order []string
	kept := recs[:0:0]
	for _, r := range recs {
		if r.sessionID == "" || r.sessionID == s.id {
			kept = append(kept, r)
			continue
		}
		f := other[r.sessionID]
		if f == nil {
			f = &foreign{first: r.line}
			other[r.sessionID] = f
			order = append(order, r.sessionID)
		}
		f.count++
	}
	for _, id := range order {
		f := other[id]
		s.warnings = append(s.warnings, Warning{File: s.file, Line: f.first,
			Message: fmt.Sprintf("%d line(s) of another session %q skipped (session is %q)", f.count, id, s.id)})
	}
	return kept
}

// ccDedupe keeps the first line of each uuid (resumed sessions repeat lines).
func ccDedupe(recs []*ccRecord) []*ccRecord {
	seen := map[string]bool{}
	out := recs[:0:0]
	for _, r := range recs {
		if r.uuid != "" {
			if seen[r.uuid] {
				continue
			}
			seen[r.uuid] = true
		}
		out = append(out, r)
	}
	return out
}
