package imprint

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// The copy of one store into another (imprint migrate, curate.Migrate):
// the source reads every record as it holds it through its Dumper, and
// the target writes them with its ordinary write methods where those keep
// a record as it is (AppendMessages, PutMemory with nothing to supersede,
// SaveCapture, CreateAPIKey and RevokeAPIKey) and with its Loader where
// they cannot (a session's whole state, jobs as they stand, the mark of
// the copy itself).

// DumpCounts are how many records of each kind a store holds, over every
// scope: what a copy of it writes.
type DumpCounts struct {
	Sessions int `json:"sessions"`
	Messages int `json:"messages"`
	// Memories counts every version: live, superseded and forgotten.
	Memories int `json:"memories"`
	Episodes int `json:"episodes"`
	Traces   int `json:"traces"`
	APIKeys  int `json:"api_keys"`
	// LLMCalls counts the call log's lines.
	LLMCalls int `json:"llm_calls"`
}

// SessionState is a session as a copy carries it: its extraction cursor
// is named by the message it stands on, since message sequence numbers
// are the store's own.
type SessionState struct {
	Session
	// CursorMessageID is the newest message at or before the cursor; ""
	// when the cursor stands before every message.
	CursorMessageID string `json:"cursor_message_id,omitempty"`
}

// Capture is an episode with its traces in step order.
type Capture struct {
	Episode Episode `json:"episode"`
	Traces  []Trace `json:"traces"`
}

// KeyRecord is an API key with the hash of its token, as a copy carries
// it.
type KeyRecord struct {
	Key       APIKey `json:"key"`
	TokenHash []byte `json:"token_hash"`
}

// Dumper is an optional capability of a store: it reads every record of
// every scope as it is (vectors and their embedder, version chains,
// forgotten marks, the turns of open episodes), page by page in the
// order the store wrote them, so a copy written in that order ranks ties
// the same. Each Dump… method returns up to limit records after the
// position after ("" for the first page) and the position of the last one
// returned, an opaque string to pass back; fewer than limit records means
// the end.
type Dumper interface {
	// SupportsDump reports whether the Dump… methods work on this store.
	SupportsDump() bool
	// DumpCounts counts the store's records.
	DumpCounts(ctx context.Context) (DumpCounts, error)
	// DumpSessions pages through the sessions.
	DumpSessions(ctx context.Context, after string, limit int) ([]SessionState, string, error)
	// DumpMessages pages through the messages, in the order they were
	// recorded, with their vectors.
	DumpMessages(ctx context.Context, after string, limit int) ([]Message, string, error)
	// DumpMemories pages through every memory version, with its vector.
	DumpMemories(ctx context.Context, after string, limit int) ([]Memory, string, error)
	// DumpCaptures pages through the episodes (with all their turns), each
	// with its traces and their vectors.
	DumpCaptures(ctx context.Context, after string, limit int) ([]Capture, string, error)
	// DumpAPIKeys returns every API key, revoked ones too, with its hash.
	DumpAPIKeys(ctx context.Context) ([]KeyRecord, error)
	// DumpLLMCalls pages through the call log, oldest first.
	DumpLLMCalls(ctx context.Context, after string, limit int) ([]LLMCall, string, error)
}

// LoadMark is a copy's own record in the target store: which source it
// copies, how far each kind got, and whether it finished, so that a copy
// cut off resumes where it stood and a target is never filled from two
// sources.
type LoadMark struct {
	// Source names the store copied ("" when the target holds no mark).
	Source string `json:"source"`
	// Positions are the Dumper positions copied so far, by kind.
	Positions map[string]string `json:"positions"`
	// Done is set when every record was copied and counted.
	Done      bool `json:"done"`
	StartedAt Time `json:"started_at"`
	UpdatedAt Time `json:"updated_at"`
}

// Loader is an optional capability of a ServiceStore: it writes what a
// copy cannot write with the ordinary write methods, as it is.
type Loader interface {
	// SupportsLoad reports whether the Load… methods work on this store.
	SupportsLoad() bool
	// LoadSessions writes each session's row as given (workspace, scene,
	// round count, due and between-people flags, times), creating it when
	// missing, with its cursor on the sequence number of CursorMessageID
	// in this store (before every message when "" or not recorded here);
	// run after the session's messages were appended. ErrInvalid for an
	// invalid scope or a missing id.
	LoadSessions(ctx context.Context, sessions []SessionState) error
	// LoadJobs inserts jobs into the store's own jobs table as they stand
	// (kind, scope, session, episode, state, attempts, last error, unique
	// key, times; ids are the table's), never into an installed job
	// engine, so a service started on the store later hands them to its
	// engine (JobEngineHost.HandOverTableJobs). A running job is loaded
	// available (its worker is gone). A job equal to one already in the
	// table (same kind, scope, session, episode, unique key and creation
	// time) is skipped, and so is an unfinished one whose unique key an
	// unfinished job holds. It returns how many it inserted.
	LoadJobs(ctx context.Context, jobs []Job) (int, error)
	// LoadLLMCalls appends calls to the call log as they are and replaces
	// the copy mark with mark, in one transaction: a page of the log is
	// copied together with the position after it, so a copy cut off
	// never writes a page twice.
	LoadLLMCalls(ctx context.Context, calls []LLMCall, mark LoadMark) error
	// LoadMark returns the store's copy mark (zero when none).
	LoadMark(ctx context.Context) (LoadMark, error)
	// SetLoadMark replaces the store's copy mark.
	SetLoadMark(ctx context.Context, m LoadMark) error
}

// AsDumper returns s as a Dumper when it implements one and supports it.
func AsDumper(s any) (Dumper, bool) {
	d, ok := s.(Dumper)
	return d, ok && d.SupportsDump()
}

// AsLoader returns s as a Loader when it implements one and supports it.
func AsLoader(s any) (Loader, bool) {
	l, ok := s.(Loader)
	return l, ok && l.SupportsLoad()
}

// JobsToLoad returns jobs as Loader.LoadJobs inserts them: a running job
// available again (its worker is gone, and so is its attempt), a zero
// MaxAttempts DefaultJobMaxAttempts, a zero RunAt or UpdatedAt the job's
// CreatedAt.
func JobsToLoad(jobs []Job) []Job {
	out := make([]Job, len(jobs))
	for i, j := range jobs {
		if j.State == JobRunning {
			j.State = JobAvailable
			j.Attempts = max(0, j.Attempts-1)
		}
		if j.MaxAttempts <= 0 {
			j.MaxAttempts = DefaultJobMaxAttempts
		}
		if j.RunAt.IsZero() {
			j.RunAt = j.CreatedAt
		}
		if j.UpdatedAt.IsZero() {
			j.UpdatedAt = j.CreatedAt
		}
		out[i] = j
	}
	return out
}

// RowPosition is the dump position of a store whose rows have integer
// ids: the id of the last row returned.
func RowPosition(id int64) string { return strconv.FormatInt(id, 10) }

// ParseRowPosition reads a RowPosition: 0 for "" (the first page).
// ErrInvalid for a position no store of row ids gave.
func ParseRowPosition(after string) (int64, error) {
	if after == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(after, 10, 64)
	if err != nil || n < 0 {
		return 0, Invalidf("dump position %q is not one of this store's", after)
	}
	return n, nil
}

// CheckLoadSessions checks what Loader.LoadSessions requires: a valid
// scope and an id for each session.
func CheckLoadSessions(sessions []SessionState) error {
	for i, s := range sessions {
		if err := s.Scope.Validate(); err != nil {
			return fmt.Errorf("sessions[%d]: %w", i, err)
		}
		if strings.TrimSpace(s.ID) == "" {
			return Invalidf("sessions[%d]: session id is required", i)
		}
	}
	return nil
}

// CheckLoadJobs checks what Loader.LoadJobs requires: a kind, a valid
// scope and a known state for each job.
func CheckLoadJobs(jobs []Job) error {
	for i, j := range jobs {
		if err := CheckJob(j); err != nil {
			return fmt.Errorf("jobs[%d]: %w", i, err)
		}
		if err := CheckJobState(j.State); err != nil {
			return fmt.Errorf("jobs[%d]: %w", i, err)
		}
	}
	return nil
}
