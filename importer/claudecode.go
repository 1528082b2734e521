package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
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

// ccIsRequest reports whether a user line is a user request: not meta and
// carrying text, not only tool results.
func ccIsRequest(r *ccRecord) bool {
	if r.role != imprint.RoleUser || r.meta {
		return false
	}
	if r.text != "" {
		return true
	}
	for _, b := range r.blocks {
		if b.Type == "text" || b.Type == "image" {
			return true
		}
	}
	return false
}

// ccAbandoned returns the uuids of lines on abandoned branches: below a line
// of the active chain (from the session's last main line back through
// parentUuid), a sibling branch that starts with another user request or
// another assistant message is abandoned. Siblings that are tool results or
// parts of a message on the chain are kept (parallel tool calls fork too).
// Lines whose parents are unknown, or files without parent links, keep
// everything.
func ccAbandoned(recs []*ccRecord, nodes []chainNode, session string) map[string]bool {
	var leaf *ccRecord
	for i := len(recs) - 1; i >= 0; i-- {
		if !recs[i].side && recs[i].uuid != "" {
			leaf = recs[i]
			break
		}
	}
	if leaf == nil {
		return nil
	}
	var main []chainNode
	for _, n := range nodes {
		if n.session == "" || n.session == session {
			main = append(main, n)
		}
	}
	path := chainPath(main, leaf.uuid)
	pathMsgs := map[string]bool{}
	for _, n := range main {
		if path[n.id] && n.rec != nil && n.rec.msgID != "" {
			pathMsgs[n.rec.msgID] = true
		}
	}
	return abandonedBranches(main, path, func(n chainNode) bool {
		if n.rec == nil {
			return false
		}
		if n.rec.role == imprint.RoleAssistant {
			return n.rec.msgID == "" || !pathMsgs[n.rec.msgID]
		}
		return ccIsRequest(n.rec)
	})
}

// chainNode is one entry of a parent-linked transcript.
type chainNode struct {
	id, parent string
	session    string
	rec        *ccRecord
}

// chainPath walks parent links back from leaf and returns the ids on the way.
func chainPath(nodes []chainNode, leaf string) map[string]bool {
	parent := make(map[string]string, len(nodes))
	known := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if !known[n.id] {
			known[n.id] = true
			parent[n.id] = n.parent
		}
	}
	path := map[string]bool{}
	for cur := leaf; cur != "" && known[cur] && !path[cur]; cur = parent[cur] {
		path[cur] = true
	}
	return path
}

// abandonedBranches returns the ids of the subtrees hanging off the path
// whose first node isBranch says starts another branch.
func abandonedBranches(nodes []chainNode, path map[string]bool, isBranch func(chainNode) bool) map[string]bool {
	children := map[string][]chainNode{}
	seen := map[string]bool{}
	for _, n := range nodes {
		if n.parent != "" && !seen[n.id] {
			children[n.parent] = append(children[n.parent], n)
		}
		seen[n.id] = true
	}
	dropped := map[string]bool{}
	var drop func(n chainNode)
	drop = func(n chainNode) {
		stack := []chainNode{n}
		for len(stack) > 0 {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if dropped[c.id] || path[c.id] {
				continue
			}
			dropped[c.id] = true
			stack = append(stack, children[c.id]...)
		}
	}
	for _, n := range nodes {
		if !path[n.id] {
			continue
		}
		for _, c := range children[n.id] {
			if !path[c.id] && isBranch(c) {
				drop(c)
			}
		}
	}
	return dropped
}

// ccBuilder turns records into turns for one transcript or sub-agent run.
type ccBuilder struct {
	session  string
	subagent bool
	turns    []imprint.Turn
	byMsg    map[string]int // assistant message id → turn, until the next user turn
	pending  map[string]int // tool_use id → tool turn awaiting its result
}

func newCCBuilder(session string, subagent bool) *ccBuilder {
	return &ccBuilder{session: session, subagent: subagent, byMsg: map[string]int{}, pending: map[string]int{}}
}

func (b *ccBuilder) meta(m imprint.TurnMeta) imprint.TurnMeta {
	if b.subagent {
		m.Depth, m.IsSubagent = 1, true
	}
	return m
}

func (b *ccBuilder) recordID(r *ccRecord, key string) string {
	if key == "" {
		key = r.uuid
	}
	if key == "" {
		key = fmt.Sprintf("line-%d", r.line)
	}
	return derivedID(SourceClaudeCode, b.session, key)
}

// add appends the turns of one record.
func (b *ccBuilder) add(r *ccRecord) {
	if r.skip {
		return
	}
	if r.role == imprint.RoleAssistant {
		b.addAssistant(r)
		return
	}
	b.addUser(r)
}

func (b *ccBuilder) addAssistant(r *ccRecord) {
	var texts, thinking []string
	var tools []ccBlock
	if r.text != "" {
		texts = append(texts, r.text)
	}
	for _, bl := range r.blocks {
		switch bl.Type {
		case "text":
			texts = append(texts, bl.Text)
		case "thinking":
			thinking = append(thinking, bl.Thinking)
		case "tool_use", "server_tool_use":
			tools = append(tools, bl)
		}
	}
	text, think := joinText(texts), joinText(thinking)
	idx, merged := -1, false
	if r.msgID != "" {
		if i, ok := b.byMsg[r.msgID]; ok {
			idx, merged = i, true
		}
	}
	if merged {
		t := &b.turns[idx]
		t.Content = joinText([]string{t.Content, text})
		t.Meta.Thinking = joinText([]string{t.Meta.Thinking, think})
	} else {
		if text == "" && think == "" && len(tools) == 0 {
			return
		}
		b.turns = append(b.turns, imprint.Turn{
			ID:      b.recordID(r, r.msgID),
			Role:    imprint.RoleAssistant,
			Content: text,
			TS:      r.ts,
			Meta:    b.meta(imprint.TurnMeta{Thinking: think}),
		})
		if r.msgID != "" {
			b.byMsg[r.msgID] = len(b.turns) - 1
		}
	}
	for _, tu := range tools {
		b.turns = append(b.turns, imprint.Turn{
			Role: imprint.RoleTool,
			TS:   r.ts,
			Meta: b.meta(imprint.TurnMeta{Name: tu.Name, Input: toolInput(tu.Input), ToolCallID: tu.ID, StartedAt: r.ts}),
		})
		if tu.ID != "" {
			b.pending[tu.ID] = len(b.turns) - 1
		}
	}
}

func (b *ccBuilder) addUser(r *ccRecord) {
	var texts []string
	if r.text != "" {
		texts = append(texts, r.text)
	}
	for _, bl := range r.blocks {
		switch bl.Type {
		case "text":
			texts = append(texts, bl.Text)
		case "image":
			texts = append(texts, "[image]")
		case "document":
			texts = append(texts, "[document]")
		case "tool_result":
			b.addResult(r, bl)
		}
	}
	if r.meta {
		return
	}
	text := joinText(texts)
	text, isMeta := ccLocalCommand(text)
	if isMeta || text == "" {
		return
	}
	b.turns = append(b.turns, imprint.Turn{
		ID:      b.recordID(r, ""),
		Role:    imprint.RoleUser,
		Content: text,
		TS:      r.ts,
		Meta:    b.meta(imprint.TurnMeta{}),
	})
	clear(b.byMsg)
}

func (b *ccBuilder) addResult(r *ccRecord, bl ccBlock) {
	out := ccResultText(bl.Content)
	errText := ""
	if bl.IsError {
		errText = out
		if errText == "" {
			errText = "error"
		}
	}
	if i, ok := b.pending[bl.ToolUseID]; ok && bl.ToolUseID != "" {
		t := &b.turns[i]
		t.Content = out
		t.Meta.Error = errText
		t.Meta.EndedAt = r.ts
		if !t.Meta.StartedAt.IsZero() && r.ts.Before(t.Meta.StartedAt.Time) {
			t.Meta.EndedAt = imprint.Time{} // out of order: no duration rather than a negative one
		}
		delete(b.pending, bl.ToolUseID)
		return
	}
	// A result whose call is not in this transcript is still an observation.
	b.turns = append(b.turns, imprint.Turn{
		Role:    imprint.RoleTool,
		Content: out,
		TS:      r.ts,
		Meta:    b.meta(imprint.TurnMeta{ToolCallID: bl.ToolUseID, Error: errText, EndedAt: r.ts}),
	})
}

// ccResultText is the text of a tool_result's content: a string, or blocks
// whose text parts are joined (images become "[image]").
func ccResultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	var blocks []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, e := range blocks {
		var bl ccBlock
		if json.Unmarshal(e, &bl) != nil {
			continue
		}
		switch bl.Type {
		case "text":
			parts = append(parts, bl.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

var (
	ccCommandName = regexp.MustCompile(`(?s)<command-name>(.*?)</command-name>`)
	ccCommandArgs = regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`)
)

// ccLocalCommand recognises the user lines Claude Code writes around local
// slash commands and shell escapes. A command invocation is rewritten to what
// the user typed ("/name args"); the caveat, command output, shell input and
// output, and interruption notices are meta (isMeta true).
func ccLocalCommand(text string) (string, bool) {
	t := strings.TrimSpace(text)
	for _, p := range []string{
		"Caveat: The messages below were generated by the user while running local commands",
		"<local-command-stdout>", "<local-command-stderr>",
		"<bash-input>", "<bash-stdout>", "<bash-stderr>",
		"[Request interrupted by user",
	} {
		if strings.HasPrefix(t, p) {
			return "", true
		}
	}
	if m := ccCommandName.FindStringSubmatch(t); m != nil {
		name := strings.TrimSpace(m[1])
		if name != "" && !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		if a := ccCommandArgs.FindStringSubmatch(t); a != nil {
			if args := strings.TrimSpace(a[1]); args != "" {
				name += " " + args
			}
		}
		return name, name == ""
	}
	return text, false
}

// build turns the kept records into main turns and sub-agent runs.
func (s *ccSession) build(recs []*ccRecord, dropped map[string]bool) {
	main := newCCBuilder(s.id, false)
	// Sub-agent lines in the session file are grouped by the root of their
	// own chain, so parallel sub-agents do not interleave.
	sideRoot := map[string]string{}
	type sideGroup struct {
		anchor int
		b      *ccBuilder
	}
	groups := map[string]*sideGroup{}
	var order []string
	for _, r := range recs {
		if r.uuid != "" && dropped[r.uuid] {
			continue
		}
		if r.agentID != "" {
			for _, bl := range r.blocks {
				if bl.Type == "tool_result" && bl.ToolUseID != "" {
					s.spawns[r.agentID] = bl.ToolUseID
				}
			}
		}
		if !r.side {
			main.add(r)
			continue
		}
		root := r.uuid
		if p, ok := sideRoot[r.parent]; ok && r.parent != "" {
			root = p
		}
		if r.uuid != "" {
			sideRoot[r.uuid] = root
		}
		g := groups[root]
		if g == nil {
			g = &sideGroup{anchor: len(main.turns), b: newCCBuilder(s.id, true)}
			groups[root] = g
			order = append(order, root)
		}
		g.b.add(r)
	}
	s.main = main.turns
	for _, root := range order {
		g := groups[root]
		if len(g.b.turns) > 0 {
			s.side = append(s.side, ccSideRun{anchor: g.anchor, turns: g.b.turns})
		}
	}
}

// transcript builds episodes from the main turns and appends each sub-agent
// run to the episode its anchor falls in.
func (s *ccSession) transcript() Transcript {
	fillTimes(s.main)
	eps, owner := buildEpisodes(s.id, imprint.Scope{}, s.main, SourceClaudeCode)
	for _, run := range s.side {
		fillTimes(run.turns)
		if len(eps) == 0 {
			eps = append(eps, newEpisode(s.id, imprint.Scope{}, run.turns, SourceClaudeCode))
			eps[0].Meta.Depth, eps[0].Meta.IsSubagent = 1, true
			continue
		}
		ei := len(eps) - 1
		for i := min(run.anchor, len(owner)) - 1; i >= 0; i-- {
			if owner[i] >= 0 {
				ei = owner[i]
				break
			}
		}
		if run.anchor == 0 {
			ei = 0
		}
		eps[ei].Turns = append(eps[ei].Turns, run.turns...)
		setEpisodeTimes(&eps[ei])
	}
	sortWarnings(s.warnings)
	return Transcript{
		Source:    SourceClaudeCode,
		SessionID: s.id,
		Messages:  MessagesFromTurns(s.id, imprint.Scope{}, s.main, SourceClaudeCode),
		Episodes:  eps,
		Warnings:  s.warnings,
	}
}

// ReadClaudeCodeDir reads a Claude Code project folder
// (~/.claude/projects/<project>): every session file <session>.jsonl, with
// the sub-agent transcripts <session>/subagents/agent-*.jsonl (and, from
// older versions, agent-*.jsonl beside the sessions) attached to the episode
// whose Task tool call spawned them (found through agent-<id>.meta.json's
// toolUseId or the Task result's agentId), or to the session's last episode.
// A folder holding no session files but project folders (~/.claude/projects
// itself) is read one level down. Transcripts come sorted by file name.
// Unreadable files and sub-agent files without their session are reported
// in the returned warnings; errors are only for an unreadable dir.
func ReadClaudeCodeDir(dir string) ([]Transcript, []Warning, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read claude code folder: %w", err)
	}
	var sessions, agents, subdirs []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
			subdirs = append(subdirs, name)
		case strings.HasSuffix(name, ".jsonl") && strings.HasPrefix(name, "agent-"):
			agents = append(agents, name)
		case strings.HasSuffix(name, ".jsonl"):
			sessions = append(sessions, name)
		}
	}
	if len(sessions) == 0 && len(agents) == 0 {
		var all []Transcript
		var warns []Warning
		for _, sd := range subdirs {
			p := filepath.Join(dir, sd)
			if !ccHasJSONL(p) {
				continue
			}
			trs, ws, err := ReadClaudeCodeDir(p)
			if err != nil {
				warns = append(warns, Warning{File: p, Message: err.Error()})
				continue
			}
			all = append(all, trs...)
			warns = append(warns, ws...)
		}
		return all, warns, nil
	}

	var warns []Warning
	var parsed []*ccSession
	byID := map[string]*ccSession{}
	for _, name := range sessions {
		p := filepath.Join(dir, name)
		s, err := ccParseFile(p, false)
		if err != nil {
			warns = append(warns, Warning{File: p, Message: err.Error()})
			continue
		}
		parsed = append(parsed, s)
		if byID[s.id] == nil {
			byID[s.id] = s
		}
		sub := filepath.Join(dir, strings.TrimSuffix(name, ".jsonl"), "subagents")
		files, _ := filepath.Glob(filepath.Join(sub, "agent-*.jsonl"))
		sort.Strings(files)
		for _, f := range files {
			a, err := ccParseFile(f, true)
			if err != nil {
				warns = append(warns, Warning{File: f, Message: err.Error()})
				continue
			}
			s.attach(a, ccAgentID(f), ccMetaToolUse(f))
		}
	}
	for _, name := range agents {
		p := filepath.Join(dir, name)
		a, err := ccParseFile(p, true)
		if err != nil {
			warns = append(warns, Warning{File: p, Message: err.Error()})
			continue
		}
		if parent := byID[a.id]; parent != nil {
			parent.attach(a, ccAgentID(p), ccMetaToolUse(p))
			continue
		}
		warns = append(warns, Warning{File: p, Message: fmt.Sprintf("sub-agent of session %q, which is not in the folder; imported on its own", a.id)})
		parsed = append(parsed, a)
	}
	out := make([]Transcript, 0, len(parsed))
	for _, s := range parsed {
		tr, err := cleanTranscript(s.transcript(), s.file)
		if err != nil {
			warns = append(warns, Warning{File: s.file, Message: "session skipped: " + err.Error()})
			continue
		}
		out = append(out, tr)
	}
	return out, warns, nil
}

// ccHasJSONL reports whether dir directly holds a .jsonl file.
func ccHasJSONL(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	return len(m) > 0
}

func ccParseFile(path string, subagent bool) (*ccSession, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	return parseClaudeCode(f, path, subagent)
}

// ccAgentID is the agent id in a sub-agent file name agent-<id>.jsonl.
func ccAgentID(path string) string {
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "agent-"), ".jsonl")
}

// ccMetaToolUse reads agent-<id>.meta.json beside a sub-agent file and
// returns its toolUseId, or "".
func ccMetaToolUse(path string) string {
	b, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + ".meta.json")
	if err != nil {
		return ""
	}
	var m struct {
		ToolUseID string `json:"toolUseId"`
	}
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.ToolUseID
}

// attach adds a sub-agent transcript's turns to s, anchored after the tool
// call that spawned it (by toolUseID, else by the agent id a Task result
// named), or at the end.
func (s *ccSession) attach(a *ccSession, agentID, toolUseID string) {
	turns := a.main
	for _, run := range a.side {
		turns = append(turns, run.turns...)
	}
	s.warnings = append(s.warnings, a.warnings...)
	if len(turns) == 0 {
		return
	}
	if toolUseID == "" {
		toolUseID = s.spawns[agentID]
	}
	anchor := len(s.main)
	if toolUseID != "" {
		for i, t := range s.main {
			if t.Role == imprint.RoleTool && t.Meta.ToolCallID == toolUseID {
				anchor = i + 1
				break
			}
		}
	}
	s.side = append(s.side, ccSideRun{anchor: anchor, turns: turns})
}
