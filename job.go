package imprint

import (
	"context"
	"time"
)

// JobKind names a kind of durable background work.
type JobKind string

// Kinds of durable jobs.
const (
	// JobCapture captures a closed episode (EpisodeID) into traces.
	JobCapture JobKind = "capture"
	// JobExtract extracts the pending messages of a session (SessionID),
	// window after window. At most one runs per session at a time.
	JobExtract JobKind = "extract"
	// JobEmbed retries embedding for records of the scope that have no vector.
	JobEmbed JobKind = "embed"
)

// JobState is where a job is in its life.
type JobState string

// Job states.
const (
	JobAvailable JobState = "available" // waiting to run at RunAt
	JobRunning   JobState = "running"   // claimed by a worker
	JobRetryable JobState = "retryable" // failed, will run again at RunAt
	JobFailed    JobState = "failed"    // gave up after MaxAttempts; kept for /v1/status
	JobCompleted JobState = "completed"
)

// Job is one unit of durable background work. Jobs survive restarts: a job
// a crashed process left running is handed back on the next start.
type Job struct {
	ID          int64    `json:"id"`
	Kind        JobKind  `json:"kind"`
	Scope       Scope    `json:"scope"`
	SessionID   string   `json:"session_id,omitempty"`
	EpisodeID   string   `json:"episode_id,omitempty"`
	State       JobState `json:"state"`
	Attempts    int      `json:"attempts"`
	MaxAttempts int      `json:"max_attempts"`
	LastError   string   `json:"last_error,omitempty"`
	// UniqueKey, when set, allows only one unfinished job (available,
	// running or retryable) with that key; e.g. "extract:<scope>:<session>".
	UniqueKey string `json:"unique_key,omitempty"`
	RunAt     Time   `json:"run_at"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
}

// JobStats counts unfinished and failed jobs.
type JobStats struct {
	Available int `json:"available"`
	Running   int `json:"running"`
	Retryable int `json:"retryable"`
	Failed    int `json:"failed"`
}

// Add counts n jobs in state; states JobStats does not count are ignored.
func (s *JobStats) Add(state JobState, n int) {
	switch state {
	case JobAvailable:
		s.Available += n
	case JobRunning:
		s.Running += n
	case JobRetryable:
		s.Retryable += n
	case JobFailed:
		s.Failed += n
	}
}

// JobStore keeps durable jobs. Methods without a scope act on the whole
// store: they are for the process that runs the jobs, never for a caller's
// request.
type JobStore interface {
	// EnqueueJob inserts j (State available unless RunAt is later). When
	// j.UniqueKey is set and an unfinished job with that key exists, it
	// returns that job and false instead of inserting.
	EnqueueJob(ctx context.Context, j Job) (Job, bool, error)
	// ClaimJobs marks up to n jobs that are available or retryable with
	// RunAt <= now as running (Attempts+1) and returns them, oldest RunAt
	// first. An extract job is not claimed while another extract job of the
	// same scope and session is running.
	ClaimJobs(ctx context.Context, now time.Time, n int) ([]Job, error)
	// CompleteJob marks a running job completed.
	CompleteJob(ctx context.Context, id int64) error
	// FailJob records errMsg on a running job and makes it retryable at
	// retryAt, or failed when final.
	FailJob(ctx context.Context, id int64, errMsg string, retryAt time.Time, final bool) error
	// ReleaseJob hands a running job back (available, Attempts-1) without
	// counting the attempt: for a graceful shutdown mid-job.
	ReleaseJob(ctx context.Context, id int64) error
	// SnoozeJob hands a running job back to run again at runAt, its
	// attempt not counted (Attempts-1): for a job an LLM budget refused.
	SnoozeJob(ctx context.Context, id int64, runAt time.Time) error
	// ResetRunningJobs makes every running job available again; called at
	// start, it recovers the jobs of a process that crashed.
	ResetRunningJobs(ctx context.Context) (int, error)
	// JobStats counts jobs by state; scope nil counts all scopes.
	JobStats(ctx context.Context, scope *Scope) (JobStats, error)
	// ListJobs returns jobs of the scope in state (failed ones for
	// /v1/status), newest first; scope nil lists all scopes.
	ListJobs(ctx context.Context, scope *Scope, state JobState, limit int) ([]Job, error)
}

// LiveEpisodeStore keeps the open episodes of live sessions (imprint serve).
type LiveEpisodeStore interface {
	// AppendTurns appends turns to the session's open episode in one
	// transaction, opening a new episode with id newID when the session has
	// none, and returns the episode after the append: its Turns are the
	// turns this call added (a turn id the episode holds is skipped) and
	// TurnCount its number of turns, so an append never reads or writes
	// the turns before it.
	AppendTurns(ctx context.Context, scope Scope, sessionID string, turns []Turn, newID string) (Episode, error)
	// OpenEpisode returns the session's open episode, or ErrNotFound.
	OpenEpisode(ctx context.Context, scope Scope, sessionID string) (Episode, error)
	// CloseEpisode closes the episode (status finalized or abandoned,
	// closed_by, ended_at) and, when job is not nil, enqueues it in the same
	// transaction. ErrNotFound when the episode is not in scope; ErrConflict
	// when it is not open.
	CloseEpisode(ctx context.Context, scope Scope, episodeID string, closedBy ClosedBy, job *Job) (Episode, error)
	// SubmitEpisode saves a complete episode (as SaveEpisode) and enqueues
	// job in the same transaction. ErrConflict when the id belongs to
	// another scope.
	SubmitEpisode(ctx context.Context, ep Episode, job Job) error
	// IdleEpisodes returns open episodes (all scopes) whose last turn is
	// before the given time, oldest first.
	IdleEpisodes(ctx context.Context, before time.Time, limit int) ([]Episode, error)
	// SessionsToExtract returns sessions (all scopes) that are due for
	// extraction, or that have pending messages and no new message since
	// idleBefore.
	SessionsToExtract(ctx context.Context, idleBefore time.Time, limit int) ([]Session, error)
}

// ServiceStore is what imprint serve needs from a backend: the Store plus
// durable jobs, live episodes and the API keys of its clients.
type ServiceStore interface {
	Store
	JobStore
	LiveEpisodeStore
	APIKeyStore
}
