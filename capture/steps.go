package capture

import (
	"strconv"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// Step is one agent decision point of an episode: a segment (one or more
// consecutive user turns and everything up to the next user turn) with at
// least one assistant turn.
type Step struct {
	// Key is the segment's position in the episode, as a decimal string;
	// it identifies the step across re-captures.
	Key string
	// Index is the segment's position in the episode.
	Index int
	// TS is the time of the step's last turn.
	TS        imprint.Time
	UserText  string
	AgentText string
	ToolCalls []imprint.ToolCall
	// RawReflection is the first non-empty adapter-native reflection of the
	// step's assistant turns.
	RawReflection string
	Depth         int
	IsSubagent    bool
	// Synthetic marks the skeletal step of an episode without any assistant
	// turn.
	Synthetic bool
	// Truncated is set by Normalize when a text was clamped.
	Truncated bool
}

// segment is a run of turns starting at a user turn (or the episode's start).
type segment struct {
	index int
	turns []imprint.Turn
}

// ExtractSteps splits the turns of ep into steps (seed §4): a user turn, or
// several consecutive ones, opens a segment; a segment with an assistant turn
// is one step whose tool calls are all the tool turns after its first
// assistant turn; tool turns before it become observation lines of the
// state. System turns are ignored. An episode with user turns but no
// assistant turn yields one skeletal synthetic step. Turns should already
// carry times (see Run).
func ExtractSteps(ep imprint.Episode) []Step {
	segs := segmentTurns(ep.Turns)
	var steps []Step
	for _, sg := range segs {
		if st, ok := stepFromSegment(sg, ep.Meta); ok {
			steps = append(steps, st)
		}
	}
	if len(steps) == 0 {
		if st, ok := syntheticStep(segs, ep.Meta); ok {
			steps = append(steps, st)
		}
	}
	return steps
}

func segmentTurns(turns []imprint.Turn) []segment {
	var segs []segment
	var cur []imprint.Turn
	lastRole := imprint.Role("")
	for _, t := range turns {
		if t.Role == imprint.RoleSystem {
			continue
		}
		if t.Role == imprint.RoleUser && lastRole != imprint.RoleUser && len(cur) > 0 {
			segs = append(segs, segment{index: len(segs), turns: cur})
			cur = nil
		}
		cur = append(cur, t)
		lastRole = t.Role
	}
	if len(cur) > 0 {
		segs = append(segs, segment{index: len(segs), turns: cur})
	}
	return segs
}

func stepFromSegment(sg segment, em imprint.EpisodeMeta) (Step, bool) {
	st := Step{Key: strconv.Itoa(sg.index), Index: sg.index, Depth: em.Depth, IsSubagent: em.IsSubagent}
	var users, agents, observations []string
	seenAssistant := false
	for _, t := range sg.turns {
		st.Depth = max(st.Depth, t.Meta.Depth)
		st.IsSubagent = st.IsSubagent || t.Meta.IsSubagent
		st.TS = t.TS
		switch t.Role {
		case imprint.RoleUser:
			if s := strings.TrimSpace(t.Content); s != "" {
				users = append(users, s)
			}
		case imprint.RoleAssistant:
			seenAssistant = true
			if s := strings.TrimSpace(t.Content); s != "" {
				agents = append(agents, s)
			}
			if st.RawReflection == "" {
				st.RawReflection = strings.TrimSpace(t.Meta.Reflection)
			}
		case imprint.RoleTool:
			if seenAssistant {
				st.ToolCalls = append(st.ToolCalls, toolCallFromTurn(t))
			} else {
				observations = append(observations, observationLine(t))
			}
		}
	}
	if !seenAssistant {
		return Step{}, false
	}
	st.UserText = strings.Join(append([]string{strings.Join(users, "\n\n")}, observations...), "\n")
	st.UserText = strings.TrimSpace(st.UserText)
	st.AgentText = strings.Join(agents, "\n\n")
	return st, true
}

// syntheticStep gives an episode whose segments have no assistant turn one
// skeletal step (the first segment's user text) so later stages have
// somewhere to assign the task's outcome.
func syntheticStep(segs []segment, em imprint.EpisodeMeta) (Step, bool) {
	for _, sg := range segs {
		var users []string
		var ts imprint.Time
		depth, sub := em.Depth, em.IsSubagent
		for _, t := range sg.turns {
			depth = max(depth, t.Meta.Depth)
			sub = sub || t.Meta.IsSubagent
			if t.Role == imprint.RoleUser {
				if s := strings.TrimSpace(t.Content); s != "" {
					users = append(users, s)
					ts = t.TS
				}
			}
		}
		if len(users) == 0 {
			continue
		}
		return Step{
			Key: strconv.Itoa(sg.index), Index: sg.index, TS: ts,
			UserText: strings.Join(users, "\n\n"), Depth: depth, IsSubagent: sub, Synthetic: true,
		}, true
	}
	return Step{}, false
}

func toolCallFromTurn(t imprint.Turn) imprint.ToolCall {
	tc := imprint.ToolCall{
		Name:       strings.TrimSpace(t.Meta.Name),
		Input:      imprint.StorableJSON(t.Meta.Input),
		Output:     t.Content,
		Error:      t.Meta.Error,
		ErrorCode:  t.Meta.ErrorCode,
		ToolCallID: t.Meta.ToolCallID,
		StartedAt:  t.Meta.StartedAt,
		EndedAt:    t.Meta.EndedAt,
	}
	if tc.Name == "" {
		tc.Name = "unknown_tool"
	}
	if !tc.StartedAt.IsZero() && !tc.EndedAt.IsZero() {
		d := tc.EndedAt.Sub(tc.StartedAt.Time).Milliseconds()
		tc.DurationMS = &d
	}
	return tc
}

func observationLine(t imprint.Turn) string {
	name := strings.TrimSpace(t.Meta.Name)
	if name == "" {
		name = "tool"
	}
	out := strings.TrimSpace(t.Content)
	if e := strings.TrimSpace(t.Meta.Error); e != "" {
		if out == "" {
			out = "error: " + e
		} else {
			out += " (error: " + e + ")"
		}
	}
	return "[observation " + name + "] " + out
}
