package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

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
		Workspace: s.cwd,
	}
}
