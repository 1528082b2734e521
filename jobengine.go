package imprint

import "context"

// JobEngine is a durable-job engine outside the store (River, in imprint
// serve) whose jobs are written in the store's own transactions, of type
// TTx (*sql.Tx for SQLite, pgx.Tx for PostgreSQL): the store hands it the
// transaction in which it writes the rows a job is about, so "write and
// enqueue" is one commit.
type JobEngine[TTx any] interface {
	// InsertTx enqueues j (validated, Scope set) inside tx with the
	// semantics of JobStore.EnqueueJob: when j.UniqueKey is held by an
	// unfinished job it inserts nothing and returns that job and false.
	InsertTx(ctx context.Context, tx TTx, j Job) (Job, bool, error)
	// JobStats counts the engine's jobs as JobStore.JobStats.
	JobStats(ctx context.Context, scope *Scope) (JobStats, error)
	// ListJobs lists the engine's jobs as JobStore.ListJobs.
	ListJobs(ctx context.Context, scope *Scope, state JobState, limit int) ([]Job, error)
}

// JobEngineHost is an optional capability of a ServiceStore whose write
// transactions are of type TTx: it hands its jobs to a JobEngine instead of
// its own jobs table. After SetJobEngine, EnqueueJob, CloseEpisode and
// SubmitEpisode call the engine's InsertTx inside the store's transaction,
// and JobStats and ListJobs answer from the engine; the table's own job
// methods (ClaimJobs, CompleteJob, …) keep working on the table.
type JobEngineHost[TTx any] interface {
	// SupportsJobEngine reports whether SetJobEngine works on this store.
	SupportsJobEngine() bool
	// SetJobEngine installs e for the rest of the store's life; call it
	// before the store is shared. ErrInvalid for a nil engine.
	SetJobEngine(e JobEngine[TTx]) error
	// HandOverTableJobs moves the unfinished jobs of the store's jobs table
	// (left by a run without the engine) into the installed engine, in one
	// transaction, and returns how many it moved; their attempts start
	// again. Without an engine it does nothing.
	HandOverTableJobs(ctx context.Context) (int, error)
}

// AsJobEngineHost returns s as a JobEngineHost of transactions of type TTx
// when it implements one and supports it.
func AsJobEngineHost[TTx any](s any) (JobEngineHost[TTx], bool) {
	h, ok := s.(JobEngineHost[TTx])
	return h, ok && h.SupportsJobEngine()
}
