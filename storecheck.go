package imprint

import (
	"fmt"
	"strings"
)

// What every store checks and fills in before it writes, and the limits
// of its listings, so that the SQLite and PostgreSQL stores refuse and
// default the same things (the storetest suite holds both to it).

// Search and listing limits of the stores.
const (
	// MaxSearchLimit bounds the hits a caller can ask a store's search
	// for (one that asks none gets DefaultSearchLimit).
	MaxSearchLimit = 1000
	// DefaultRetryLimit is the batch of the unembedded listings
	// (EmbedRetryStore) when the limit is not in (0, MaxRetryLimit].
	DefaultRetryLimit = 100
	MaxRetryLimit     = 10000
)

// SearchLimit is a search's limit n clamped: DefaultSearchLimit when n is
// not above zero, at most MaxSearchLimit.
func SearchLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultSearchLimit
	case n > MaxSearchLimit:
		return MaxSearchLimit
	}
	return n
}

// RetryLimit is the limit n of an unembedded listing, DefaultRetryLimit
// when it is not in (0, MaxRetryLimit].
func RetryLimit(n int) int {
	if n <= 0 || n > MaxRetryLimit {
		return DefaultRetryLimit
	}
	return n
}

// CheckAppend checks what MessageStore.AppendMessages requires of its
// arguments: a valid scope, a session id, and an id and a valid workspace
// (or none) for every message.
func CheckAppend(scope Scope, sessionID string, msgs []Message) error {
	if err := scope.Validate(); err != nil {
		return err
	}
	if strings.TrimSpace(sessionID) == "" {
		return Invalidf("session_id is required")
	}
	for i, m := range msgs {
		if strings.TrimSpace(m.ID) == "" {
			return Invalidf("messages[%d].id is required", i)
		}
		if err := ValidateWorkspace(fmt.Sprintf("messages[%d].workspace", i), m.Workspace); err != nil {
			return err
		}
	}
	return nil
}

// CheckEpisode checks what a store requires of an episode it saves: a
// valid scope, an id and a session id.
func CheckEpisode(ep Episode) error {
	if err := ep.Scope.Validate(); err != nil {
		return err
	}
	if strings.TrimSpace(ep.ID) == "" {
		return Invalidf("episode id is required")
	}
	if strings.TrimSpace(ep.SessionID) == "" {
		return Invalidf("episode session_id is required")
	}
	return nil
}

// CheckCaptures checks the captures of SaveCaptures, traces[i] being
// those of eps[i], each as CheckCapture does. It returns a copy of eps
// with their trace ids set and each capture's step keys; an error names
// the failing capture (captures[2]: ...).
func CheckCaptures(eps []Episode, traces [][]Trace) ([]Episode, []map[string]bool, error) {
	if len(eps) != len(traces) {
		return nil, nil, Invalidf("%d episodes with %d trace lists", len(eps), len(traces))
	}
	out := make([]Episode, len(eps))
	keys := make([]map[string]bool, len(eps))
	for c := range eps {
		ep, k, err := CheckCapture(eps[c], traces[c])
		if err != nil {
			return nil, nil, fmt.Errorf("captures[%d]: %w", c, err)
		}
		out[c], keys[c] = ep, k
	}
	return out, keys, nil
}

// CheckCapture checks an episode and its traces for SaveCapture(s): the
// episode as CheckEpisode, ids and step keys required, step keys unique.
// It returns the episode with its trace ids set and the set of step keys.
func CheckCapture(ep Episode, traces []Trace) (Episode, map[string]bool, error) {
	if err := CheckEpisode(ep); err != nil {
		return ep, nil, err
	}
	ids := make([]string, len(traces))
	keys := map[string]bool{}
	for i, t := range traces {
		if strings.TrimSpace(t.ID) == "" {
			return ep, nil, Invalidf("traces[%d].id is required", i)
		}
		if strings.TrimSpace(t.StepKey) == "" {
			return ep, nil, Invalidf("traces[%d].step_key is required", i)
		}
		if keys[t.StepKey] {
			return ep, nil, Invalidf("traces[%d].step_key %q is repeated", i, t.StepKey)
		}
		keys[t.StepKey] = true
		ids[i] = t.ID
	}
	ep.TraceIDs = ids
	return ep, keys, nil
}

// TraceText is what a store's keyword index holds for a trace: its user
// text, agent text, reflection and tool names, a line each.
func TraceText(t Trace) string {
	parts := []string{t.UserText, t.AgentText}
	if t.Reflection != nil {
		parts = append(parts, *t.Reflection)
	}
	for _, c := range t.ToolCalls {
		parts = append(parts, c.Name)
	}
	return strings.Join(parts, "\n")
}

// MemoryToPut checks a memory for MemoryStore.PutMemory (a valid scope,
// an id, content, a known type, no id of supersede its own) and returns it
// with its defaults filled in at now: CreatedAt now, UpdatedAt CreatedAt,
// Supersedes the ids it supersedes.
func MemoryToPut(m Memory, supersede []string, now Time) (Memory, error) {
	if err := m.Scope.Validate(); err != nil {
		return m, err
	}
	switch {
	case strings.TrimSpace(m.ID) == "":
		return m, Invalidf("memory id is required")
	case strings.TrimSpace(m.Content) == "":
		return m, Invalidf("memory content is required")
	case !m.Type.Valid():
		return m, Invalidf("memory type %q is not persona, episodic or instruction", m.Type)
	}
	for _, id := range supersede {
		if id == m.ID {
			return m, Invalidf("memory %q cannot supersede itself", id)
		}
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	if len(m.Supersedes) == 0 && len(supersede) > 0 {
		m.Supersedes = supersede
	}
	return m, nil
}

// CheckJob checks what a store requires of a job it enqueues: a kind and a
// valid scope.
func CheckJob(j Job) error {
	if strings.TrimSpace(string(j.Kind)) == "" {
		return Invalidf("job kind is required")
	}
	return j.Scope.Validate()
}

// ForEpisode returns j with its empty episode, session and scope taken
// from ep: the job of a closed or submitted episode.
func (j Job) ForEpisode(ep Episode) Job {
	if j.EpisodeID == "" {
		j.EpisodeID = ep.ID
	}
	if j.SessionID == "" {
		j.SessionID = ep.SessionID
	}
	if j.Scope == (Scope{}) {
		j.Scope = ep.Scope
	}
	return j
}

// CheckScopeOrAll checks scope unless it is nil (all scopes, for the job
// process's listings).
func CheckScopeOrAll(scope *Scope) error {
	if scope == nil {
		return nil
	}
	return scope.Validate()
}

// CheckJobState returns ErrInvalid for a state that is not a JobState.
func CheckJobState(state JobState) error {
	switch state {
	case JobAvailable, JobRunning, JobRetryable, JobFailed, JobCompleted:
		return nil
	}
	return Invalidf("job state %q is not available, running, retryable, failed or completed", state)
}
