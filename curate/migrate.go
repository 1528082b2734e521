package curate

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// The kinds a migration copies, in the order it copies them: messages
// before sessions (a session's cursor is set on a copied message),
// jobs last.
const (
	MigrateMessages = "messages"
	MigrateSessions = "sessions"
	MigrateMemories = "memories"
	MigrateCaptures = "captures"
	MigrateLLMCalls = "llm_calls"
	MigrateAPIKeys  = "api_keys"
	MigrateJobs     = "jobs"
)

// migratePage is how many records a migration reads and writes at a
// time by default.
const migratePage = 500

// MigrateOptions tune a migration.
type MigrateOptions struct {
	// Source names the source store in the target's mark (the CLI gives
	// "sqlite:" and the file's absolute path): a migration cut off resumes
	// only from the same source. Required.
	Source string
	// DryRun counts what would be copied and writes nothing.
	DryRun bool
	// Progress, when set, is called after each page written.
	Progress func(MigrateProgress)
	// PageSize is how many records are read and written at a time (500
	// when 0; episodes a tenth of it, at least one).
	PageSize int
}

// MigrateProgress is how far a migration is in one kind.
type MigrateProgress struct {
	Kind  string `json:"kind"`
	Done  int    `json:"done"`
	Total int    `json:"total"`
}

// MigrateCopied counts what one run of a migration wrote.
type MigrateCopied struct {
	Sessions int `json:"sessions"`
	Messages int `json:"messages"`
	Memories int `json:"memories"`
	Episodes int `json:"episodes"`
	Traces   int `json:"traces"`
	APIKeys  int `json:"api_keys"`
	LLMCalls int `json:"llm_calls"`
	Jobs     int `json:"jobs"`
}

// MigrateStats says what a migration found and did.
type MigrateStats struct {
	// Source counts the source's records; Jobs its unfinished jobs, which
	// the target gets in its jobs table, and FailedJobs those that gave
	// up, which are not copied.
	Source     imprint.DumpCounts `json:"source"`
	Jobs       int                `json:"jobs"`
	FailedJobs int                `json:"failed_jobs"`
	// Copied is what this run wrote (a resumed run rewrites the page it
	// was cut off in: messages already there are not counted again).
	Copied MigrateCopied `json:"copied"`
	// Resumed is set when the run went on with a migration cut off;
	// AlreadyDone when the target holds a finished one of the same
	// source, and nothing was written.
	Resumed     bool `json:"resumed"`
	AlreadyDone bool `json:"already_done"`
	DryRun      bool `json:"dry_run"`
}

// Migrate copies every record of from into to with the same ids: messages
// in the order they were recorded with their vectors, sessions with their
// extraction state, memories with every version (superseded_by and
// forgotten_at kept), episodes with their turns and traces, the LLM call
// log, API keys
// (revoked ones stay revoked) and the unfinished jobs (into to's jobs
// table, which a service started on to hands to its job engine). from
// must be a Dumper, to a Loader (ErrInvalid otherwise).
//
// The target must hold nothing, or a migration of the same source cut off
// (its mark): then the copy goes on from the page it stood at, writing
// what it writes again without duplicates, so the end is the same as an
// uncut run's. A target holding other records, or a migration of another
// source, is ErrConflict; a finished migration of the same source is left
// as it is (AlreadyDone), unless the source holds records written after
// it finished (after the mark's positions, or API keys the target lacks):
// that is ErrConflict naming them, since a finished copy is not topped up
// (what the source changed in place would not follow). At the end the target's counts must equal the
// source's, else the error says which differ (the source was written to
// meanwhile).
func Migrate(ctx context.Context, from, to imprint.Store, o MigrateOptions) (MigrateStats, error) {
	var st MigrateStats
	d, ok := imprint.AsDumper(from)
	if !ok {
		return st, imprint.Invalidf("migrate: the source store cannot be read for a copy")
	}
	l, ok := imprint.AsLoader(to)
	if !ok {
		return st, imprint.Invalidf("migrate: the target store cannot take a copy")
	}
	if o.Source == "" {
		return st, imprint.Invalidf("migrate: the source needs a name")
	}
	counts, err := d.DumpCounts(ctx)
	if err != nil {
		return st, fmt.Errorf("migrate: count the source: %w", err)
	}
	st.Source, st.DryRun = counts, o.DryRun
	jobs, failed, err := sourceJobs(ctx, from)
	if err != nil {
		return st, err
	}
	st.Jobs, st.FailedJobs = len(jobs), failed
	page := o.PageSize
	if page <= 0 {
		page = migratePage
	}
	mark, err := l.LoadMark(ctx)
	if err != nil {
		return st, fmt.Errorf("migrate: read the target's mark: %w", err)
	}
	switch {
	case mark.Source == "":
		if err := checkEmpty(ctx, to); err != nil {
			return st, err
		}
	case mark.Source != o.Source:
		return st, imprint.Conflictf("migrate: the target holds a migration of %s, not of %s", mark.Source, o.Source)
	case mark.Done:
		st.AlreadyDone = true
		return st, sourceUnchanged(ctx, d, to, mark, page)
	default:
		st.Resumed = true
	}
	if o.DryRun {
		return st, nil
	}
	now := imprint.Now()
	if mark.Source == "" {
		mark = imprint.LoadMark{Source: o.Source, StartedAt: now}
	}
	if mark.Positions == nil {
		mark.Positions = map[string]string{}
	}
	m := &migration{d: d, l: l, to: to, mark: mark, o: o, st: &st, page: page}
	if err := m.save(ctx); err != nil {
		return st, err
	}
	steps := []struct {
		kind  string
		total int
		run   func(context.Context, string) (string, int, bool, error)
	}{
		{MigrateMessages, counts.Messages, m.messages},
		{MigrateSessions, counts.Sessions, m.sessions},
		{MigrateMemories, counts.Memories, m.memories},
		{MigrateCaptures, counts.Episodes, m.captures},
		{MigrateLLMCalls, counts.LLMCalls, m.llmCalls},
	}
	for _, s := range steps {
		if err := m.pages(ctx, s.kind, s.total, s.run); err != nil {
			return st, fmt.Errorf("migrate %s: %w (%s)", s.kind, err, resumeHint)
		}
	}
	if err := m.apiKeys(ctx); err != nil {
		return st, fmt.Errorf("migrate %s: %w (%s)", MigrateAPIKeys, err, resumeHint)
	}
	n, err := l.LoadJobs(ctx, jobs)
	if err != nil {
		return st, fmt.Errorf("migrate %s: %w (%s)", MigrateJobs, err, resumeHint)
	}
	st.Copied.Jobs = n
	m.progress(MigrateJobs, len(jobs), len(jobs))
	if err := checkCounts(ctx, counts, to); err != nil {
		return st, err
	}
	m.mark.Done = true
	return st, m.save(ctx)
}

// sourceJobs lists the unfinished jobs of from (through its job engine
// when one is installed) and counts its failed ones.
func sourceJobs(ctx context.Context, from imprint.Store) ([]imprint.Job, int, error) {
	js, ok := from.(imprint.JobStore)
	if !ok {
		return nil, 0, nil
	}
	var jobs []imprint.Job
	for _, state := range []imprint.JobState{imprint.JobAvailable, imprint.JobRetryable, imprint.JobRunning} {
		list, err := js.ListJobs(ctx, nil, state, math.MaxInt32)
		if err != nil {
			return nil, 0, fmt.Errorf("migrate: list the source's %s jobs: %w", state, err)
		}
		jobs = append(jobs, list...)
	}
	stats, err := js.JobStats(ctx, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("migrate: count the source's jobs: %w", err)
	}
	return jobs, stats.Failed, nil
}

// sourceUnchanged returns ErrConflict when the source holds records
// written after its migration into to finished: records after the
// positions the mark recorded, or API keys the target lacks. A finished
// copy is not topped up: what the source changed in place meanwhile (a
// session's cursor, a memory superseded or forgotten, an episode's turns)
// has no position to find it by, and the target may be in service.
func sourceUnchanged(ctx context.Context, d imprint.Dumper, to imprint.Store, mark imprint.LoadMark, page int) error {
	var n MigrateCopied
	var err error
	pos := func(kind string) string { return mark.Positions[kind] }
	if n.Messages, err = countAfter(ctx, pos(MigrateMessages), page, d.DumpMessages); err != nil {
		return fmt.Errorf("migrate: look for new messages in the source: %w", err)
	}
	if n.Sessions, err = countAfter(ctx, pos(MigrateSessions), page, d.DumpSessions); err != nil {
		return fmt.Errorf("migrate: look for new sessions in the source: %w", err)
	}
	if n.Memories, err = countAfter(ctx, pos(MigrateMemories), page, d.DumpMemories); err != nil {
		return fmt.Errorf("migrate: look for new memory versions in the source: %w", err)
	}
	if n.Episodes, err = countAfter(ctx, pos(MigrateCaptures), max(1, page/10), d.DumpCaptures); err != nil {
		return fmt.Errorf("migrate: look for new episodes in the source: %w", err)
	}
	if n.LLMCalls, err = countAfter(ctx, pos(MigrateLLMCalls), page, d.DumpLLMCalls); err != nil {
		return fmt.Errorf("migrate: look for new LLM calls in the source: %w", err)
	}
	if ks, ok := to.(imprint.APIKeyStore); ok {
		keys, err := d.DumpAPIKeys(ctx)
		if err != nil {
			return fmt.Errorf("migrate: read the source's API keys: %w", err)
		}
		have, err := ks.ListAPIKeys(ctx)
		if err != nil {
			return fmt.Errorf("migrate: read the target's API keys: %w", err)
		}
		held := map[string]bool{}
		for _, k := range have {
			held[k.ID] = true
		}
		for _, k := range keys {
			if !held[k.Key.ID] {
				n.APIKeys++
			}
		}
	}
	if n == (MigrateCopied{}) {
		return nil
	}
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{n.Sessions, "sessions"}, {n.Messages, "messages"}, {n.Memories, "memory versions"},
		{n.Episodes, "episodes"}, {n.LLMCalls, "LLM calls"}, {n.APIKeys, "API keys"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return imprint.Conflictf("migrate: the source was written to after its migration into this target finished: it holds %s the target lacks; "+
		"a finished migration is not topped up (what changed in place, such as a superseded memory or a session's cursor, would not follow): "+
		"write the new records through the target, or migrate again into an empty database", strings.Join(parts, ", "))
}

// countAfter counts the records a Dumper pages through after a position.
func countAfter[T any](ctx context.Context, after string, page int,
	read func(context.Context, string, int) ([]T, string, error)) (int, error) {
	n := 0
	for {
		recs, next, err := read(ctx, after, page)
		if err != nil {
			return n, err
		}
		n += len(recs)
		if len(recs) < page {
			return n, nil
		}
		after = next
	}
}

// checkEmpty returns ErrConflict when the target holds any record.
func checkEmpty(ctx context.Context, to imprint.Store) error {
	if d, ok := imprint.AsDumper(to); ok {
		c, err := d.DumpCounts(ctx)
		if err != nil {
			return fmt.Errorf("migrate: count the target: %w", err)
		}
		if c != (imprint.DumpCounts{}) {
			return imprint.Conflictf("migrate: the target is not empty (%d sessions, %d messages, %d memories, %d episodes, %d API keys, %d LLM calls) and holds no migration of this source",
				c.Sessions, c.Messages, c.Memories, c.Episodes, c.APIKeys, c.LLMCalls)
		}
		return nil
	}
	t, err := to.Totals(ctx)
	if err != nil {
		return fmt.Errorf("migrate: count the target: %w", err)
	}
	if t.Sessions+t.Messages+t.Traces+len(t.Memories) > 0 {
		return imprint.Conflictf("migrate: the target is not empty (%d sessions, %d messages) and holds no migration of this source", t.Sessions, t.Messages)
	}
	return nil
}

// checkCounts compares the target's counts with the source's.
func checkCounts(ctx context.Context, want imprint.DumpCounts, to imprint.Store) error {
	d, ok := imprint.AsDumper(to)
	if !ok {
		return nil
	}
	got, err := d.DumpCounts(ctx)
	if err != nil {
		return fmt.Errorf("migrate: count the target: %w", err)
	}
	if got != want {
		return fmt.Errorf("migrate: the copy holds %+v, the source %+v (was the source written to meanwhile? run again to copy the rest)", got, want)
	}
	return nil
}

// resumeHint ends the error of a migration cut off after it began.
const resumeHint = "the target holds a partial copy: the same migration run again resumes it"

// migration is one run of Migrate.
type migration struct {
	d    imprint.Dumper
	l    imprint.Loader
	to   imprint.Store
	mark imprint.LoadMark
	o    MigrateOptions
	st   *MigrateStats
	page int
}

func (m *migration) save(ctx context.Context) error {
	m.mark.UpdatedAt = imprint.Now()
	if err := m.l.SetLoadMark(ctx, m.mark); err != nil {
		return fmt.Errorf("migrate: write the target's mark: %w", err)
	}
	return nil
}

func (m *migration) progress(kind string, done, total int) {
	if m.o.Progress != nil {
		m.o.Progress(MigrateProgress{Kind: kind, Done: done, Total: total})
	}
}

// pages copies one kind page by page from the mark's position, saving the
// position after each page written; run copies the page after a position
// and returns the next position, how many records it read and whether
// that was the last page.
func (m *migration) pages(ctx context.Context, kind string, total int,
	run func(context.Context, string) (string, int, bool, error)) error {
	done := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		next, n, last, err := run(ctx, m.mark.Positions[kind])
		if err != nil {
			return err
		}
		done += n
		m.mark.Positions[kind] = next
		if err := m.save(ctx); err != nil {
			return err
		}
		m.progress(kind, done, total)
		if last {
			return nil
		}
	}
}

// messages appends a page of messages, each run of one session's a batch.
func (m *migration) messages(ctx context.Context, after string) (string, int, bool, error) {
	msgs, next, err := m.d.DumpMessages(ctx, after, m.page)
	if err != nil {
		return after, 0, false, err
	}
	var batches []imprint.MessageBatch
	for _, msg := range msgs {
		msg.Seq = 0
		if n := len(batches); n > 0 && batches[n-1].Scope == msg.Scope && batches[n-1].SessionID == msg.SessionID {
			batches[n-1].Messages = append(batches[n-1].Messages, msg)
			continue
		}
		batches = append(batches, imprint.MessageBatch{Scope: msg.Scope, SessionID: msg.SessionID, Messages: []imprint.Message{msg}})
	}
	if b, ok := imprint.AsBatchAppender(m.to); ok && len(batches) > 0 {
		res, err := b.AppendMessageBatches(ctx, batches)
		if err != nil {
			return after, 0, false, err
		}
		for _, r := range res {
			m.st.Copied.Messages += len(r.Inserted)
		}
	} else {
		for _, b := range batches {
			r, err := m.to.AppendMessages(ctx, b.Scope, b.SessionID, b.Messages)
			if err != nil {
				return after, 0, false, err
			}
			m.st.Copied.Messages += len(r.Inserted)
		}
	}
	return next, len(msgs), len(msgs) < m.page, nil
}

// sessions writes a page of sessions as they are.
func (m *migration) sessions(ctx context.Context, after string) (string, int, bool, error) {
	ss, next, err := m.d.DumpSessions(ctx, after, m.page)
	if err != nil {
		return after, 0, false, err
	}
	if len(ss) > 0 {
		if err := m.l.LoadSessions(ctx, ss); err != nil {
			return after, 0, false, err
		}
	}
	m.st.Copied.Sessions += len(ss)
	return next, len(ss), len(ss) < m.page, nil
}

// memories writes a page of memory versions as they are: PutMemory with
// nothing to supersede keeps superseded_by, forgotten_at, the content
// hash and the vector.
func (m *migration) memories(ctx context.Context, after string) (string, int, bool, error) {
	ms, next, err := m.d.DumpMemories(ctx, after, m.page)
	if err != nil {
		return after, 0, false, err
	}
	for _, mem := range ms {
		if err := m.to.PutMemory(ctx, mem, nil); err != nil {
			return after, 0, false, fmt.Errorf("memory %s: %w", mem.ID, err)
		}
	}
	m.st.Copied.Memories += len(ms)
	return next, len(ms), len(ms) < m.page, nil
}

// captures writes a page of episodes with their traces, in one
// transaction when the target can.
func (m *migration) captures(ctx context.Context, after string) (string, int, bool, error) {
	cs, next, err := m.d.DumpCaptures(ctx, after, max(1, m.page/10))
	if err != nil {
		return after, 0, false, err
	}
	eps := make([]imprint.Episode, len(cs))
	traces := make([][]imprint.Trace, len(cs))
	for i, c := range cs {
		eps[i], traces[i] = c.Episode, c.Traces
		m.st.Copied.Traces += len(c.Traces)
	}
	if s, ok := imprint.AsCaptureSaver(m.to); ok && len(cs) > 0 {
		err = s.SaveCaptures(ctx, eps, traces)
	} else {
		for i := range eps {
			if err = m.to.SaveCapture(ctx, eps[i], traces[i]); err != nil {
				break
			}
		}
	}
	if err != nil {
		return after, 0, false, err
	}
	m.st.Copied.Episodes += len(cs)
	return next, len(cs), len(cs) < max(1, m.page/10), nil
}

// llmCalls appends a page of the call log, with the position after it in
// the same transaction (the log has no ids to skip a page written twice).
func (m *migration) llmCalls(ctx context.Context, after string) (string, int, bool, error) {
	calls, next, err := m.d.DumpLLMCalls(ctx, after, m.page)
	if err != nil {
		return after, 0, false, err
	}
	m.mark.Positions[MigrateLLMCalls] = next
	m.mark.UpdatedAt = imprint.Now()
	if err := m.l.LoadLLMCalls(ctx, calls, m.mark); err != nil {
		return after, 0, false, err
	}
	m.st.Copied.LLMCalls += len(calls)
	return next, len(calls), len(calls) < m.page, nil
}

// apiKeys creates the keys the target lacks, revoking the revoked ones.
func (m *migration) apiKeys(ctx context.Context) error {
	ks, ok := m.to.(imprint.APIKeyStore)
	if !ok {
		return nil
	}
	keys, err := m.d.DumpAPIKeys(ctx)
	if err != nil {
		return err
	}
	have, err := ks.ListAPIKeys(ctx)
	if err != nil {
		return err
	}
	held := map[string]imprint.APIKey{}
	for _, k := range have {
		held[k.ID] = k
	}
	for _, r := range keys {
		k, ok := held[r.Key.ID]
		if !ok {
			if err := ks.CreateAPIKey(ctx, r.Key, r.TokenHash); err != nil {
				return fmt.Errorf("key %s: %w", r.Key.ID, err)
			}
			m.st.Copied.APIKeys++
		}
		if r.Key.RevokedAt != nil && (!ok || k.RevokedAt == nil) {
			if _, err := ks.RevokeAPIKey(ctx, r.Key.ID, *r.Key.RevokedAt); err != nil {
				return fmt.Errorf("revoke key %s: %w", r.Key.ID, err)
			}
		}
	}
	m.progress(MigrateAPIKeys, len(keys), len(keys))
	return nil
}

// WriteText writes the stats for people: what the source holds and what
// this run did.
func (s MigrateStats) WriteText(w io.Writer) error {
	c := s.Source
	held := fmt.Sprintf("%d sessions, %d messages, %d memory versions, %d episodes, %d traces, %d LLM calls, %d API keys, %d unfinished jobs",
		c.Sessions, c.Messages, c.Memories, c.Episodes, c.Traces, c.LLMCalls, c.APIKeys, s.Jobs)
	var err error
	switch {
	case s.DryRun && s.AlreadyDone:
		_, err = fmt.Fprintf(w, "dry run: the target holds a finished migration of this store; the source holds %s\n", held)
	case s.DryRun:
		_, err = fmt.Fprintf(w, "dry run: would copy %s\n", held)
	case s.AlreadyDone:
		_, err = fmt.Fprintf(w, "already migrated: the target holds a finished migration of this store (%s); nothing copied\n", held)
	default:
		verb := "migrated"
		if s.Resumed {
			verb = "resumed and finished the migration:"
		}
		p := s.Copied
		_, err = fmt.Fprintf(w, "%s %s (this run wrote %d sessions, %d messages, %d memories, %d episodes, %d traces, %d LLM calls, %d API keys, %d jobs)\n",
			verb, held, p.Sessions, p.Messages, p.Memories, p.Episodes, p.Traces, p.LLMCalls, p.APIKeys, p.Jobs)
	}
	if err == nil && s.FailedJobs > 0 {
		_, err = fmt.Fprintf(w, "%d failed jobs were not copied\n", s.FailedJobs)
	}
	return err
}
