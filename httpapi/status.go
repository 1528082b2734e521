package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// maxFailedJobs bounds the failed jobs listed in a status.
const maxFailedJobs = 50

// Status is the reply of GET /v1/status, for the caller's scope.
type Status struct {
	// PendingMessages is the total over Sessions.
	PendingMessages int              `json:"pending_messages"`
	Sessions        []SessionStatus  `json:"sessions"`
	Jobs            imprint.JobStats `json:"jobs"`
	FailedJobs      []FailedJob      `json:"failed_jobs"`
	// LLM sums the LLM calls by op: the whole server's, so only the
	// administrator gets them (empty for an API key).
	LLM map[string]OpUsage `json:"llm"`
	// Budget is the scope's LLM budget (llm.budget); absent when off.
	Budget *BudgetStatus `json:"budget,omitempty"`
}

// BudgetStatus is a scope's LLM budget: the limits, what the scope spent
// in the last hour, whether its LLM work waits and until when, and the
// jobs of the scope waiting to run later (for the budget, or a moment for
// a busy session).
type BudgetStatus struct {
	imprint.BudgetState
	WaitingJobs int `json:"waiting_jobs"`
}

// maxWaitingJobs bounds the jobs read to count the waiting ones.
const maxWaitingJobs = 1000

// SessionStatus is the extraction state of one session.
type SessionStatus struct {
	SessionID       string       `json:"session_id"`
	PendingMessages int          `json:"pending_messages"`
	LastExtractedAt imprint.Time `json:"last_extracted_at"`
}

// FailedJob is a job that gave up; its messages stay pending.
type FailedJob struct {
	Kind      imprint.JobKind `json:"kind"`
	SessionID string          `json:"session_id"`
	Attempts  int             `json:"attempts"`
	LastError string          `json:"last_error"`
}

// OpUsage sums the calls of one LLM op.
type OpUsage struct {
	Calls            int `json:"calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	Errors           int `json:"errors"`
}

// pendingCounter is a store that counts the pending messages of every
// session of a scope in one go (the PostgreSQL store: one statement
// instead of one per session, for a status polled while a service
// drains).
type pendingCounter interface {
	PendingCounts(ctx context.Context, scope imprint.Scope) (map[string]int, error)
}

// status collects the scope's status.
func (s *Server) status(ctx context.Context, scope imprint.Scope) (Status, error) {
	st := Status{Sessions: []SessionStatus{}, FailedJobs: []FailedJob{}, LLM: map[string]OpUsage{}}
	sessions, err := s.d.Store.ListSessions(ctx, scope)
	if err != nil {
		return st, fmt.Errorf("status sessions: %w", err)
	}
	var counts map[string]int
	if pc, ok := s.d.Store.(pendingCounter); ok {
		if counts, err = pc.PendingCounts(ctx, scope); err != nil {
			return st, fmt.Errorf("status pending: %w", err)
		}
	}
	for _, ss := range sessions {
		n := counts[ss.ID] // 0 for a session created after the count
		if counts == nil {
			if n, err = s.d.Store.CountPending(ctx, scope, ss.ID); err != nil {
				return st, fmt.Errorf("status pending of %s: %w", ss.ID, err)
			}
		}
		st.PendingMessages += n
		st.Sessions = append(st.Sessions, SessionStatus{SessionID: ss.ID, PendingMessages: n, LastExtractedAt: ss.LastExtractedAt})
	}
	if st.Jobs, err = s.d.Store.JobStats(ctx, &scope); err != nil {
		return st, fmt.Errorf("status jobs: %w", err)
	}
	failed, err := s.d.Store.ListJobs(ctx, &scope, imprint.JobFailed, maxFailedJobs)
	if err != nil {
		return st, fmt.Errorf("status failed jobs: %w", err)
	}
	for _, j := range failed {
		st.FailedJobs = append(st.FailedJobs, FailedJob{Kind: j.Kind, SessionID: j.SessionID, Attempts: j.Attempts, LastError: j.LastError})
	}
	usage, err := s.llmUsage(ctx)
	if err != nil {
		return st, err
	}
	for op, u := range usage {
		st.LLM[op] = OpUsage{Calls: u.Calls, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Errors: u.Errors}
	}
	if st.Budget, err = s.budget(ctx, scope); err != nil {
		return st, err
	}
	return st, nil
}

// budget reports the scope's LLM budget, nil when the server has none.
func (s *Server) budget(ctx context.Context, scope imprint.Scope) (*BudgetStatus, error) {
	if s.d.Budget == nil {
		return nil, nil
	}
	bs, err := s.d.Budget.State(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("status budget: %w", err)
	}
	if bs.CallsPerHour <= 0 && bs.PromptTokensPerHour <= 0 {
		return nil, nil
	}
	out := &BudgetStatus{BudgetState: bs}
	jobs, err := s.d.Store.ListJobs(ctx, &scope, imprint.JobAvailable, maxWaitingJobs)
	if err != nil {
		return nil, fmt.Errorf("status waiting jobs: %w", err)
	}
	now := time.Now()
	for _, j := range jobs {
		if j.RunAt.After(now) {
			out.WaitingJobs++
		}
	}
	return out, nil
}

// llmUsage sums the LLM calls by op, from the in-process log when there is
// one, else from the store's.
func (s *Server) llmUsage(ctx context.Context) (map[string]imprint.LLMUsage, error) {
	if s.d.Calls != nil {
		return s.d.Calls.Usage(), nil
	}
	u, err := s.d.Store.LLMUsageByOp(ctx, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("llm usage: %w", err)
	}
	return u, nil
}

// getStatus → Status of the caller's scope.
func (s *Server) getStatus(w http.ResponseWriter, r *http.Request) error {
	scope, err := queryScope(r)
	if err != nil {
		return err
	}
	st, err := s.status(r.Context(), scope)
	if err != nil {
		return err
	}
	if principalOf(r).key != nil {
		// The call log's sums are every tenant's: an API key's holder
		// sees its own scope's spending in Budget only.
		st.LLM = map[string]OpUsage{}
	}
	return writeJSON(w, http.StatusOK, st)
}
