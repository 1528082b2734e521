package importer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

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
