package ingest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/record"
)

// Summary is what an import did (or, in a dry run, would do); imprint
// import --json prints it as one object.
type Summary struct {
	Files            int                `json:"files"`
	Transcripts      int                `json:"transcripts"`
	MessagesRecorded int                `json:"messages_recorded"`
	MessagesSkipped  int                `json:"messages_skipped"`
	Episodes         int                `json:"episodes"`
	EpisodesSkipped  int                `json:"episodes_unchanged"`
	Traces           int                `json:"traces"`
	Memories         MemoryDecisions    `json:"memories"`
	Warnings         []importer.Warning `json:"warnings"`
	LLMCalls         int                `json:"llm_calls"`
	PromptTokens     int                `json:"prompt_tokens"`
	CompletionTokens int                `json:"completion_tokens"`
	// Dry-run only.
	DryRun                bool `json:"dry_run,omitempty"`
	LLMConfigured         bool `json:"llm_configured"`
	EstimatedLLMCalls     *int `json:"estimated_llm_calls,omitempty"`
	EstimatedPromptTokens *int `json:"estimated_prompt_tokens,omitempty"`
	// LLMBudgetReached is set when the import stopped at the LLM budget
	// (--max-llm-calls or llm.budget): EpisodesLeft episodes were not
	// captured and PendingMessages messages wait for extraction; importing
	// the same paths again resumes.
	LLMBudgetReached bool `json:"llm_budget_reached,omitempty"`
	EpisodesLeft     int  `json:"episodes_left,omitempty"`
	PendingMessages  int  `json:"pending_messages,omitempty"`
}

// MemoryDecisions counts the dedup decisions of the extracted memories.
type MemoryDecisions struct {
	Store  int `json:"store"`
	Update int `json:"update"`
	Merge  int `json:"merge"`
	Skip   int `json:"skip"`
}

// Progress is told how an import goes (a progress bar); it must be safe
// for concurrent use: capture and extraction report from their own
// goroutines.
type Progress interface {
	// Update is called after each chunk of transcripts is recorded.
	Update(s *Summary)
	// Advance is called when a source is done.
	Advance(s *Summary)
	// Episodes sets the number of episodes captured so far.
	Episodes(n int)
	// Memories adds n extracted memories.
	Memories(n int)
}

// NoProgress reports nothing.
type NoProgress struct{}

// Update implements Progress.
func (NoProgress) Update(*Summary) {}

// Advance implements Progress.
func (NoProgress) Advance(*Summary) {}

// Episodes implements Progress.
func (NoProgress) Episodes(int) {}

// Memories implements Progress.
func (NoProgress) Memories(int) {}

// Importer imports transcripts into one scope: it reads the sources a few
// ahead of the one being imported, records their messages a chunk of
// transcripts at a time, and captures their episodes and extracts their
// sessions alongside. It is idempotent and resumable: messages and
// episodes already imported are skipped.
type Importer struct {
	Store imprint.Store
	Scope imprint.Scope
	// Recorder records the L0 messages; nil with DryRun.
	Recorder *record.Recorder
	// Capture captures episodes into traces; nil does not capture.
	Capture *capture.Runner
	// Extract extracts the imported sessions; nil (or DryRun) leaves
	// their messages pending.
	Extract *extract.Runner
	// DryRun reads and counts but writes nothing, and estimates the LLM
	// calls and prompt tokens of a real import (unless NoExtract, with
	// the extraction windows of the sessions).
	DryRun    bool
	NoExtract bool
	// WindowSize and Background are extraction.max_messages_per_extraction
	// and extraction.max_background_messages, for the estimate.
	WindowSize, Background int
	// Location is the time zone of zone-less dates; nil is UTC.
	Location *time.Location
	// Progress is told how the import goes; nil reports nothing.
	Progress Progress
	// SourceAgents is set when the agent of Scope was not chosen (no
	// --agent, no IMPRINT_AGENT): the sources of a format with a default
	// agent (importer.DefaultAgent: Claude Code, OpenClaw) are imported
	// into that agent's scope, as their hooks record them.
	SourceAgents bool
	// Workspace, when set, is the workspace of every record imported;
	// else each transcript's own (Transcript.Workspace, or its Claude Code
	// project folder).
	Workspace string
}

// Run imports sources. It returns what it did; after an LLM budget
// refusal it stops cleanly with LLMBudgetReached set. A source that is not
// valid input is a warning when there are several, an ErrInvalid error
// when it is the only one.
func (im *Importer) Run(ctx context.Context, sources []Source) (*Summary, error) {
	rd := im.StartReading(ctx, sources)
	defer rd.Close()
	return im.RunReading(ctx, rd)
}

// Reading is the sources of an import being read, each agent's a few
// ahead of the one being imported (the agents are imported at once, each
// with its own readers). StartReading starts it before the rest of the
// import is set up (opening the store: connecting to PostgreSQL and
// checking its migrations takes as long as reading the first sources). It
// owns its readers: Close stops them.
type Reading struct {
	groups []agentSources
	reads  []*readAhead // of each group
	n      int          // sources in all
}

// StartReading starts reading sources for an import by im, whose Scope,
// SourceAgents and Location it uses; Close it when done.
func (im *Importer) StartReading(ctx context.Context, sources []Source) *Reading {
	r := &Reading{groups: im.byAgent(sources), n: len(sources)}
	for _, g := range r.groups {
		r.reads = append(r.reads, startReadAhead(ctx, g.sources, im.location()))
	}
	return r
}

// Close stops the readers and waits for them.
func (r *Reading) Close() {
	for _, rd := range r.reads {
		rd.close()
	}
}

// RunReading imports the sources of rd, started by im.StartReading, as
// Run does. The sources of different agents go into different scopes,
// which share nothing a write checks (dedup, sessions, episodes): their
// imports run at once, each capturing and extracting alongside the
// others' recording. The first error stops them all; the summary is what
// each did, in the order of the agents' first sources.
func (im *Importer) RunReading(ctx context.Context, rd *Reading) (*Summary, error) {
	if len(rd.groups) == 1 {
		sub := *im
		sub.Scope.Agent = rd.groups[0].agent
		return sub.run(ctx, rd.groups[0].sources, rd.reads[0], rd.n > 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sums := make([]*Summary, len(rd.groups))
	errs := make([]error, len(rd.groups))
	var all *groupsProgress
	if im.Progress != nil {
		all = &groupsProgress{p: im.Progress, msgs: make([]int, len(rd.groups)), eps: make([]int, len(rd.groups))}
	}
	var wg sync.WaitGroup
	for i, g := range rd.groups {
		sub := *im
		sub.Scope.Agent = g.agent
		if all != nil {
			sub.Progress = groupProgress{all, i}
		}
		wg.Go(func() {
			sums[i], errs[i] = sub.run(ctx, g.sources, rd.reads[i], rd.n > 1)
			if errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	total := &Summary{DryRun: im.DryRun}
	var err error
	for i := range rd.groups {
		if sums[i] != nil {
			total.add(sums[i])
		}
		// The first error that is not another group's stop.
		if errs[i] != nil && (err == nil || errors.Is(err, context.Canceled) && !errors.Is(errs[i], context.Canceled)) {
			err = errs[i]
		}
	}
	return total, err
}

// groupsProgress tells an import's Progress the counts of all its agent
// groups, imported at once: each group reports its own (groupProgress),
// and Progress is told their sums.
type groupsProgress struct {
	mu        sync.Mutex
	p         Progress
	msgs, eps []int // each group's messages recorded and episodes captured
}

// groupProgress is the Progress of group i of an import.
type groupProgress struct {
	all *groupsProgress
	i   int
}

// total is the sums of the groups' counts, as a Summary for Update and
// Advance; the caller holds mu.
func (g *groupsProgress) total() *Summary {
	var s Summary
	for i := range g.msgs {
		s.MessagesRecorded += g.msgs[i]
		s.Episodes += g.eps[i]
	}
	return &s
}

// report takes the group's counts of s and tells tell their sums.
func (g groupProgress) report(s *Summary, tell func(*Summary)) {
	g.all.mu.Lock()
	defer g.all.mu.Unlock()
	g.all.msgs[g.i], g.all.eps[g.i] = s.MessagesRecorded, max(g.all.eps[g.i], s.Episodes)
	tell(g.all.total())
}

// Update implements Progress.
func (g groupProgress) Update(s *Summary) { g.report(s, g.all.p.Update) }

// Advance implements Progress.
func (g groupProgress) Advance(s *Summary) { g.report(s, g.all.p.Advance) }

// Episodes implements Progress.
func (g groupProgress) Episodes(n int) {
	g.all.mu.Lock()
	defer g.all.mu.Unlock()
	g.all.eps[g.i] = n
	g.all.p.Episodes(g.all.total().Episodes)
}

// Memories implements Progress.
func (g groupProgress) Memories(n int) {
	g.all.mu.Lock()
	defer g.all.mu.Unlock()
	g.all.p.Memories(n)
}

// agentSources are the sources imported into one agent's scope.
type agentSources struct {
	agent   string
	sources []Source
}

// byAgent groups the sources by the agent they are imported into (in the
// order of their first source): all into Scope's agent, or with
// SourceAgents each format's default agent where it has one.
func (im *Importer) byAgent(sources []Source) []agentSources {
	var out []agentSources
	at := map[string]int{}
	for _, src := range sources {
		agent := im.Scope.Agent
		if d := importer.DefaultAgent(src.Format); im.SourceAgents && d != "" {
			agent = d
		}
		i, ok := at[agent]
		if !ok {
			i = len(out)
			at[agent] = i
			out = append(out, agentSources{agent: agent})
		}
		out[i].sources = append(out[i].sources, src)
	}
	if len(out) == 0 {
		out = append(out, agentSources{agent: im.Scope.Agent})
	}
	return out
}

// add adds what another part of the same import did to s.
func (s *Summary) add(o *Summary) {
	s.Files += o.Files
	s.Transcripts += o.Transcripts
	s.MessagesRecorded += o.MessagesRecorded
	s.MessagesSkipped += o.MessagesSkipped
	s.Episodes += o.Episodes
	s.EpisodesSkipped += o.EpisodesSkipped
	s.Traces += o.Traces
	s.Memories.Store += o.Memories.Store
	s.Memories.Update += o.Memories.Update
	s.Memories.Merge += o.Memories.Merge
	s.Memories.Skip += o.Memories.Skip
	s.Warnings = append(s.Warnings, o.Warnings...)
	s.LLMCalls += o.LLMCalls
	s.PromptTokens += o.PromptTokens
	s.CompletionTokens += o.CompletionTokens
	s.LLMConfigured = s.LLMConfigured || o.LLMConfigured
	for _, p := range []struct {
		dst **int
		v   *int
	}{{&s.EstimatedLLMCalls, o.EstimatedLLMCalls}, {&s.EstimatedPromptTokens, o.EstimatedPromptTokens}} {
		if p.v != nil {
			n := *p.v
			if *p.dst != nil {
				n += **p.dst
			}
			*p.dst = &n
		}
	}
	s.LLMBudgetReached = s.LLMBudgetReached || o.LLMBudgetReached
	s.EpisodesLeft += o.EpisodesLeft
	s.PendingMessages += o.PendingMessages
}

// location is the time zone of zone-less dates.
func (im *Importer) location() *time.Location {
	if im.Location == nil {
		return time.UTC
	}
	return im.Location
}

// run imports sources into im.Scope, their reads taken from reads; several
// is set when the import has more sources than these (another agent's).
func (im *Importer) run(ctx context.Context, sources []Source, reads *readAhead, several bool) (*Summary, error) {
	sum := &Summary{DryRun: im.DryRun}
	for _, src := range sources {
		sum.Files += max(1, src.Files)
	}
	bar := im.Progress
	if bar == nil {
		bar = NoProgress{}
	}
	var est *Estimate
	if im.DryRun {
		est = &Estimate{Background: im.Background}
		if im.Capture != nil {
			est.Capture = im.Capture.Config()
		}
	}
	var ex *extractStage
	if !im.DryRun && !im.NoExtract && im.Extract != nil {
		ex = startExtract(ctx, im.Extract, im.Scope, bar)
	}
	var cs *captureStage
	if im.Capture != nil && !im.DryRun {
		cs = im.startCapture(ctx, bar)
	}
	sessions, err := im.importSources(ctx, sources, reads, several || len(sources) > 1, sum, est, bar, cs, ex)
	if cs != nil {
		cerr := cs.finish(err != nil)
		if err == nil {
			err = cerr
		}
		cs.addTo(sum)
	}
	if ex != nil {
		// Extraction has been given every session; wait for it to finish
		// them (or, after an error, to stop) and take its counts.
		xerr := ex.finish(err != nil)
		if err == nil {
			err = xerr
		}
		ex.addTo(sum)
	}
	if err != nil {
		return sum, err
	}
	if cs != nil && cs.refused != nil || ex != nil && ex.refused != nil {
		if err := im.budgetStop(ctx, sessions, sum, cs); err != nil {
			return sum, err
		}
	}
	if im.DryRun {
		if !im.NoExtract {
			if err := est.Pending(ctx, im.Store, im.Scope, sessions, im.WindowSize); err != nil {
				return sum, err
			}
		}
		calls, tokens := est.Calls, est.Tokens
		sum.EstimatedLLMCalls, sum.EstimatedPromptTokens = &calls, &tokens
	}
	return sum, nil
}

// budgetStop fills in how far an import that stopped at the LLM budget got:
// the episodes it did not capture and the messages of its sessions left
// pending.
func (im *Importer) budgetStop(ctx context.Context, sessions []string, sum *Summary, cs *captureStage) error {
	sum.LLMBudgetReached = true
	if cs != nil {
		sum.EpisodesLeft = cs.left
	}
	for _, sid := range sessions {
		n, err := im.Store.CountPending(ctx, im.Scope, sid)
		if err != nil {
			return fmt.Errorf("count pending messages of %s: %w", sid, err)
		}
		sum.PendingMessages += n
	}
	return nil
}

// estimateTranscript counts, in a dry run, the transcript's messages not
// recorded yet and, when capturing, the episodes a real import would
// capture, and adds them to est.
func (im *Importer) estimateTranscript(ctx context.Context, tr importer.Transcript, sum *Summary, est *Estimate) error {
	n, err := est.Messages(ctx, im.Store, im.Scope, tr)
	if err != nil {
		return err
	}
	sum.MessagesRecorded += n
	sum.MessagesSkipped += len(tr.Messages) - n
	if im.Capture == nil {
		return nil
	}
	for _, ep := range tr.Episodes {
		ep, skip, err := im.episodeToCapture(ctx, ep)
		if err != nil {
			return err
		}
		if skip {
			sum.EpisodesSkipped++
			continue
		}
		sum.Episodes++
		est.Episode(ep)
	}
	return nil
}

// episodeToCapture gives an episode of a transcript its scope and id and
// says whether it was captured before and is unchanged (skip).
func (im *Importer) episodeToCapture(ctx context.Context, ep imprint.Episode) (imprint.Episode, bool, error) {
	ep = scopedEpisode(ep, im.Scope)
	prev, err := im.Store.GetEpisode(ctx, im.Scope, ep.ID)
	switch {
	case err == nil:
		return ep, unchanged(prev, ep), nil
	case !errors.Is(err, imprint.ErrNotFound):
		return ep, false, fmt.Errorf("import episode %s: %w", ep.ID, err)
	}
	return ep, false, nil
}

// episodesToCapture is episodeToCapture for several episodes, with one
// read of the stored ones when the store is an imprint.EpisodeBatchReader.
func (im *Importer) episodesToCapture(ctx context.Context, eps []imprint.Episode) ([]imprint.Episode, []bool, error) {
	br, ok := imprint.AsEpisodeBatchReader(im.Store)
	out, skip := make([]imprint.Episode, len(eps)), make([]bool, len(eps))
	if !ok {
		for i, ep := range eps {
			var err error
			if out[i], skip[i], err = im.episodeToCapture(ctx, ep); err != nil {
				return nil, nil, err
			}
		}
		return out, skip, nil
	}
	ids := make([]string, len(eps))
	for i, ep := range eps {
		out[i] = scopedEpisode(ep, im.Scope)
		ids[i] = out[i].ID
	}
	stored, err := br.GetEpisodes(ctx, im.Scope, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("import episode %s: %w", ids[0], err)
	}
	prev := make(map[string]imprint.Episode, len(stored))
	for _, e := range stored {
		prev[e.ID] = e
	}
	for i, ep := range out {
		if p, ok := prev[ep.ID]; ok {
			skip[i] = unchanged(p, ep)
		}
	}
	return out, skip, nil
}

// unchanged says whether ep, read from a transcript, was captured before
// as prev, with the same turns.
func unchanged(prev, ep imprint.Episode) bool {
	return len(prev.Turns) == len(ep.Turns) && prev.Status != imprint.EpisodeOpen
}

// importSources reads the sources (a few ahead of the one being
// imported, in parallel) and imports their transcripts in order: records
// their messages, a chunk of transcripts at a time, and hands their
// episodes to the capture stage cs; in a dry run (est) it only counts
// them. When ex is not nil, each session is handed to it once its last
// transcript in the source is recorded, so capture and extraction run
// alongside the recording of the next transcripts. A source that is not
// valid input is a warning when the import has several (several), else
// the error. It returns the sessions seen, in order of first appearance.
func (im *Importer) importSources(ctx context.Context, sources []Source, reads *readAhead, several bool,
	sum *Summary, est *Estimate, bar Progress, cs *captureStage, ex *extractStage) ([]string, error) {
	var sessions []string
	seen := map[string]bool{}
	for i, src := range sources {
		rd, err := reads.next(ctx, i)
		if err != nil {
			return nil, err
		}
		sum.Warnings = append(sum.Warnings, rd.warns...)
		if rd.err != nil {
			if errors.Is(rd.err, imprint.ErrInvalid) && several {
				// One bad file does not stop an import of many.
				sum.Warnings = append(sum.Warnings, importer.Warning{File: src.Path, Message: rd.err.Error()})
				bar.Advance(sum)
				continue
			}
			return nil, rd.err
		}
		project := sourceProject(src)
		for k := range rd.trs {
			switch {
			case im.Workspace != "":
				rd.trs[k].SetWorkspace(im.Workspace)
			case rd.trs[k].Workspace == "" && project != "":
				rd.trs[k].SetWorkspace(project)
			}
		}
		var last map[string]int // lastBySession(rd.trs), when extracting
		for j := 0; j < len(rd.trs); j += recordChunk {
			// Record the next transcripts of the source together (one
			// transaction and one conversations-shard sync for many small
			// transcripts), then hand them to capture and their sessions
			// to extraction, which go on while the next ones are recorded.
			chunk := rd.trs[j:min(j+recordChunk, len(rd.trs))]
			if im.Recorder != nil && est == nil {
				if err := im.recordChunk(ctx, chunk, sum); err != nil {
					return nil, err
				}
			}
			for _, tr := range chunk {
				sum.Transcripts++
				sum.Warnings = append(sum.Warnings, tr.Warnings...)
				if !seen[tr.SessionID] {
					seen[tr.SessionID] = true
					sessions = append(sessions, tr.SessionID)
				}
				if est != nil {
					if err := im.estimateTranscript(ctx, tr, sum, est); err != nil {
						return nil, err
					}
				} else if cs != nil {
					if err := cs.add(tr); err != nil {
						return nil, err
					}
				}
			}
			bar.Update(sum)
			if ex == nil {
				continue
			}
			if last == nil {
				last = lastBySession(rd.trs)
			}
			for k, tr := range chunk {
				// A session is handed over after its last transcript.
				if last[tr.SessionID] == j+k {
					if err := ex.add(tr.SessionID); err != nil {
						return nil, err
					}
				}
			}
		}
		bar.Advance(sum)
	}
	return sessions, nil
}

// recordChunk is the most transcripts recorded together.
const recordChunk = 64

// recordChunk records the messages of trs with one RecordMany call.
func (im *Importer) recordChunk(ctx context.Context, trs []importer.Transcript, sum *Summary) error {
	batch := make([]record.Session, 0, len(trs))
	for _, tr := range trs {
		if len(tr.Messages) > 0 {
			batch = append(batch, record.Session{SessionID: tr.SessionID, Messages: tr.Messages, BetweenPeople: tr.BetweenPeople})
		}
	}
	if len(batch) == 0 {
		return nil
	}
	res, err := im.Recorder.RecordMany(ctx, im.Scope, batch)
	if err != nil {
		return fmt.Errorf("record %s: %w", batch[0].SessionID, err)
	}
	for _, r := range res {
		sum.MessagesRecorded += r.RecordedCount
		sum.MessagesSkipped += len(r.Skipped)
	}
	return nil
}

// lastBySession returns, for each session of trs, the index of its last
// transcript.
func lastBySession(trs []importer.Transcript) map[string]int {
	last := make(map[string]int, len(trs))
	for i, tr := range trs {
		last[tr.SessionID] = i
	}
	return last
}

// scopedEpisode puts an episode read from a transcript in scope and gives
// it the id every path stores it under (imprint.DeriveEpisodeID: scope,
// session, first turn): the hooks and an import of the same transcript,
// in either order and as the transcript grows, make one episode, hence
// the same traces. The id is derived from the scope too, so one
// transcript can be imported into several scopes.
func scopedEpisode(ep imprint.Episode, scope imprint.Scope) imprint.Episode {
	ep.Scope = scope
	ep.ID = capture.DeriveEpisodeID(ep)
	return ep
}

// sourceProject is the workspace of a source's transcripts that name no
// cwd: the Claude Code project folder; "" for other formats.
func sourceProject(src Source) string {
	switch {
	case src.Format != importer.FormatClaudeCode:
		return ""
	case src.ClaudeCodeDir:
		return filepath.Base(src.Path)
	}
	return claudeCodeProject(src.Path)
}

// claudeCodeProject is the Claude Code project folder of a session file
// (~/.claude/projects/<project>/<session>.jsonl), the workspace of a
// transcript that names no cwd; "" for a file in the current directory.
func claudeCodeProject(file string) string {
	if file == "" {
		return ""
	}
	dir := filepath.Base(filepath.Dir(file))
	if dir == "." || dir == string(filepath.Separator) {
		return ""
	}
	return dir
}
