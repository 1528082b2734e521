package imprint

import (
	"encoding/json"
)

// Role is who produced a turn or message.
type Role string

// Roles of turns and messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleTool, RoleSystem:
		return true
	}
	return false
}

// ClosedBy says how an episode ended.
type ClosedBy string

// Ways an episode can end.
const (
	ClosedFinalized ClosedBy = "finalized"
	ClosedAbandoned ClosedBy = "abandoned"
)

// EpisodeStatus is the lifecycle state of a stored episode.
type EpisodeStatus string

// Episode states.
const (
	EpisodeOpen      EpisodeStatus = "open"
	EpisodeFinalized EpisodeStatus = "finalized"
	EpisodeAbandoned EpisodeStatus = "abandoned"
)

// TurnMeta is what an adapter knows about a turn beyond its text. Tool turns
// carry the call (name, input, error, id, timing); assistant turns may carry
// an adapter-native reflection, sub-agent depth and hidden thinking.
type TurnMeta struct {
	Reflection string          `json:"reflection,omitempty"`
	Depth      int             `json:"depth,omitempty"`
	IsSubagent bool            `json:"is_subagent,omitempty"`
	Thinking   string          `json:"thinking,omitempty"`
	Name       string          `json:"name,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Error      string          `json:"error,omitempty"`
	ErrorCode  string          `json:"error_code,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	StartedAt  Time            `json:"started_at,omitzero"`
	EndedAt    Time            `json:"ended_at,omitzero"`
	// Speaker is the original speaker name where the source has one (LoCoMo).
	Speaker string `json:"speaker,omitempty"`
}

// Turn is one element of an episode.
type Turn struct {
	ID      string   `json:"id,omitempty"`
	Role    Role     `json:"role"`
	Content string   `json:"content"`
	TS      Time     `json:"ts,omitzero"`
	Meta    TurnMeta `json:"meta,omitzero"`
}

// EpisodeMeta is what is known about an episode as a whole.
type EpisodeMeta struct {
	Depth      int  `json:"depth,omitempty"`
	IsSubagent bool `json:"is_subagent,omitempty"`
	// Reward is the task outcome where the source defines one (τ-bench).
	Reward *float64 `json:"reward,omitempty"`
	// TaskID names the task where the source defines one.
	TaskID string `json:"task_id,omitempty"`
	// Source names the importer or host that produced the episode.
	Source string `json:"source,omitempty"`
}

// Episode is one task arc inside a session: a user request and the agent's
// whole response. Capture turns a closed episode into traces.
type Episode struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	Scope     Scope  `json:"scope"`
	// Workspace is the project the record belongs to ("" for none): an
	// attribute and a filter, not part of its identity.
	Workspace string        `json:"workspace,omitempty"`
	Status    EpisodeStatus `json:"status,omitempty"`
	ClosedBy  ClosedBy      `json:"closed_by,omitempty"`
	Meta      EpisodeMeta   `json:"meta,omitzero"`
	Turns     []Turn        `json:"turns"`
	TraceIDs  []string      `json:"trace_ids"`
	StartedAt Time          `json:"started_at"`
	EndedAt   Time          `json:"ended_at"`
	CreatedAt Time          `json:"created_at"`
	UpdatedAt Time          `json:"updated_at"`
	// TurnCount is the episode's number of turns when Turns holds only
	// some of them: LiveEpisodeStore.AppendTurns returns the turns it
	// added, not the whole episode. Zero otherwise.
	TurnCount int `json:"-"`
}

// ToolCall is one tool invocation inside a step.
type ToolCall struct {
	Name       string          `json:"name"`
	Input      json.RawMessage `json:"input"`
	Output     string          `json:"output"`
	Error      string          `json:"error"`
	ErrorCode  string          `json:"error_code"`
	ToolCallID string          `json:"tool_call_id"`
	StartedAt  Time            `json:"started_at"`
	EndedAt    Time            `json:"ended_at"`
	DurationMS *int64          `json:"duration_ms"`
}

// ReflectionSource says where a trace's reflection came from.
type ReflectionSource string

// Reflection sources, in order of precedence.
const (
	ReflectionAdapter   ReflectionSource = "adapter"
	ReflectionExtracted ReflectionSource = "extracted"
	ReflectionSynth     ReflectionSource = "synth"
	ReflectionNone      ReflectionSource = "none"
)

// Trace is the stored L1 row for one agent decision step of an episode.
type Trace struct {
	ID        string `json:"id"`
	EpisodeID string `json:"episode_id"`
	SessionID string `json:"session_id"`
	Scope     Scope  `json:"scope"`
	// Workspace is the episode's.
	Workspace        string           `json:"workspace,omitempty"`
	StepKey          string           `json:"step_key"`
	StepIndex        int              `json:"step_index"`
	TS               Time             `json:"ts"`
	UserText         string           `json:"user_text"`
	AgentText        string           `json:"agent_text"`
	ToolCalls        []ToolCall       `json:"tool_calls"`
	Reflection       *string          `json:"reflection"`
	ReflectionSource ReflectionSource `json:"reflection_source"`
	Alpha            float64          `json:"alpha"`
	Usable           bool             `json:"usable"`
	Value            float64          `json:"value"`
	Priority         float64          `json:"priority"`
	RHuman           *float64         `json:"r_human"`
	Depth            int              `json:"depth"`
	IsSubagent       bool             `json:"is_subagent"`
	Truncated        bool             `json:"truncated"`
	HasVecSummary    bool             `json:"has_vec_summary"`
	HasVecAction     bool             `json:"has_vec_action"`
	CreatedAt        Time             `json:"created_at"`
	// VecSummary embeds the state text, VecAction the agent text and tool
	// signatures; Embedder names the embedder that made them ("hash/384").
	VecSummary []float32 `json:"-"`
	VecAction  []float32 `json:"-"`
	Embedder   string    `json:"-"`
}
