package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/record"
)

// importFormats are the values --format takes.
var importFormats = []string{"auto", importer.FormatClaudeCode, importer.FormatOpenClaw, importer.FormatOpenAI,
	importer.FormatChatGPT, importer.FormatLoCoMo, importer.FormatImprint}

// importOptions are the flags of imprint import.
type importOptions struct {
	format    string
	noExtract bool
	noCapture bool
	dryRun    bool
	tz        string
	// maxLLMCalls stops the import cleanly after this many LLM calls (0:
	// no limit); noWait exits instead of waiting for the import lock.
	maxLLMCalls int
	noWait      bool
}

// importSummary is the one object imprint import --json prints.
type importSummary struct {
	Files            int                `json:"files"`
	Transcripts      int                `json:"transcripts"`
	MessagesRecorded int                `json:"messages_recorded"`
	MessagesSkipped  int                `json:"messages_skipped"`
	Episodes         int                `json:"episodes"`
	EpisodesSkipped  int                `json:"episodes_unchanged"`
	Traces           int                `json:"traces"`
	Memories         memoryDecisions    `json:"memories"`
	Warnings         []importer.Warning `json:"warnings"`
	LLMCalls         int                `json:"llm_calls"`
	PromptTokens     int                `json:"prompt_tokens"`
	CompletionTokens int                `json:"completion_tokens"`
	// Dry-run only.
	DryRun                bool `json:"dry_run,omitempty"`
	LLMConfigured         bool `json:"llm_configured"`
	EstimatedLLMCalls     *int `json:"estimated_llm_calls,omitempty"`
	EstimatedPromptTokens *int `json:"estimated_prompt_tokens,omitempty"`
	// LLMBudgetReached is set when the import stopped at --max-llm-calls
	// (or llm.budget): EpisodesLeft episodes were not captured and
	// PendingMessages messages wait for extraction; importing the same
	// paths again resumes.
	LLMBudgetReached bool `json:"llm_budget_reached,omitempty"`
	EpisodesLeft     int  `json:"episodes_left,omitempty"`
	PendingMessages  int  `json:"pending_messages,omitempty"`
}

type memoryDecisions struct {
	Store  int `json:"store"`
	Update int `json:"update"`
	Merge  int `json:"merge"`
	Skip   int `json:"skip"`
}

func newImportCmd(a *App) *cobra.Command {
	var o importOptions
	cmd := &cobra.Command{
		Use:   "import [--format F] [--no-extract] [--no-capture] [--dry-run] PATH...",
		Short: "Import agent transcripts: record messages, capture episodes, extract memories",
		Long: "import reads transcripts from files or folders (Claude Code project folders such as\n" +
			"~/.claude/projects included), records their messages, captures their episodes into\n" +
			"traces and extracts memories. It is idempotent and resumable: importing the same files\n" +
			"again adds nothing, a transcript that grew adds only what is new, and an interrupted\n" +
			"import continues where it stopped. --max-llm-calls N stops cleanly after N LLM calls\n" +
			"(what is not captured or extracted yet stays for the next import of the same paths).\n" +
			"One import writes a data dir at a time: a second waits for the lock <data dir>/import.lock\n" +
			"(or, with --no-wait, exits 1 naming it). Formats: " + strings.Join(importFormats, ", ") + ".",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runImport(cmd.Context(), o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "auto", "transcript format: "+strings.Join(importFormats, ", "))
	f.BoolVar(&o.noExtract, "no-extract", false, "record and capture only; leave messages pending for extraction")
	f.BoolVar(&o.noCapture, "no-capture", false, "do not capture episodes into traces")
	f.BoolVar(&o.dryRun, "dry-run", false, "report what would be imported and estimate LLM calls and prompt tokens; write nothing")
	f.StringVar(&o.tz, "tz", "UTC", "time zone of zone-less dates (LoCoMo), e.g. Europe/Amsterdam")
	f.IntVar(&o.maxLLMCalls, "max-llm-calls", 0, "stop cleanly after this many LLM calls; run the import again to resume (0: no limit)")
	f.BoolVar(&o.noWait, "no-wait", false, "exit 1 instead of waiting when another import holds the data dir's import lock")
	return cmd
}

// importSource is one unit the importer reads: a file, or a Claude Code
// project folder (sessions and their sub-agent files together).
type importSource struct {
	path   string
	format string
	ccDir  bool
}

func (a *App) runImport(ctx context.Context, o importOptions, paths []string) error {
	if !slices.Contains(importFormats, o.format) {
		return imprint.Invalidf("--format %q: want one of %s", o.format, strings.Join(importFormats, ", "))
	}
	loc, err := time.LoadLocation(o.tz)
	if err != nil {
		return imprint.Invalidf("--tz %q: %v", o.tz, err)
	}
	sources, warns, err := collectSources(paths, o.format)
	if err != nil {
		return err
	}
	if o.maxLLMCalls < 0 {
		return imprint.Invalidf("--max-llm-calls %d: want 0 (no limit) or more", o.maxLLMCalls)
	}
	if !o.dryRun {
		release, err := a.lockImport(ctx, o.noWait)
		if err != nil {
			return err
		}
		defer release()
	}
	sum := &importSummary{Files: len(sources), Warnings: warns, DryRun: o.dryRun}
	a.useClock(ctx)
	a.mu.Lock()
	a.maxLLMCalls = o.maxLLMCalls
	a.mu.Unlock()
	m, err := a.LLM()
	if err != nil {
		return err
	}
	sum.LLMConfigured = m != nil
	st, err := a.Store(ctx)
	if err != nil {
		return err
	}
	var capRunner *capture.Runner
	if !o.noCapture {
		if capRunner, err = a.captureRunner(ctx); err != nil {
			return err
		}
	}
	var est *estimate
	var rec *record.Recorder
	if o.dryRun {
		est = &estimate{cfg: a.Config}
		if capRunner != nil {
			est.capture = capRunner.Config()
		}
	} else if rec, err = a.l0Recorder(ctx); err != nil {
		return err
	}
	bar := a.progress(len(sources))
	var ex *extractStage
	if !o.dryRun && !o.noExtract {
		r, err := a.extractRunner(ctx)
		if err != nil {
			return err
		}
		ex = startExtract(ctx, r, a.Scope(), bar)
	}
	var cs *captureStage
	if capRunner != nil && !o.dryRun {
		cs = a.startCapture(ctx, st, capRunner, bar)
	}
	sessions, err := a.importSources(ctx, sources, loc, st, rec, capRunner, sum, est, bar, cs, ex)
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
		return err
	}
	if cs != nil && cs.refused != nil || ex != nil && ex.refused != nil {
		if err := a.budgetStop(ctx, st, sessions, sum, cs); err != nil {
			return err
		}
	}
	if o.dryRun {
		if !o.noExtract {
			if err := est.pending(ctx, st, a.Scope(), sessions, a.Config.Extraction.MaxMessagesPerExtraction); err != nil {
				return err
			}
		}
		calls, tokens := est.calls, est.tokens
		sum.EstimatedLLMCalls, sum.EstimatedPromptTokens = &calls, &tokens
	}
	bar.finish()
	for _, u := range a.LLMCalls().Usage() {
		sum.LLMCalls += u.Calls
		sum.PromptTokens += u.PromptTokens
		sum.CompletionTokens += u.CompletionTokens
	}
	if sum.Warnings == nil {
		sum.Warnings = []importer.Warning{}
	}
	if a.JSON {
		return a.PrintJSON(sum)
	}
	a.printImportSummary(sum)
	return nil
}

// budgetStop fills in how far an import that stopped at the LLM budget got:
// the episodes it did not capture and the messages of its sessions left
// pending.
func (a *App) budgetStop(ctx context.Context, st imprint.Store, sessions []string, sum *importSummary, cs *captureStage) error {
	sum.LLMBudgetReached = true
	if cs != nil {
		sum.EpisodesLeft = cs.left
	}
	for _, sid := range sessions {
		n, err := st.CountPending(ctx, a.Scope(), sid)
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
func (a *App) estimateTranscript(ctx context.Context, st imprint.Store, tr importer.Transcript, sum *importSummary, est *estimate, capturing bool) error {
	n, err := est.messages(ctx, st, a.Scope(), tr)
	if err != nil {
		return err
	}
	sum.MessagesRecorded += n
	sum.MessagesSkipped += len(tr.Messages) - n
	if !capturing {
		return nil
	}
	for _, ep := range tr.Episodes {
		ep, skip, err := a.episodeToCapture(ctx, st, ep)
		if err != nil {
			return err
		}
		if skip {
			sum.EpisodesSkipped++
			continue
		}
		sum.Episodes++
		est.episode(ep)
	}
	return nil
}

// episodeToCapture gives an episode of a transcript its scope and id and
// says whether it was captured before and is unchanged (skip).
func (a *App) episodeToCapture(ctx context.Context, st imprint.Store, ep imprint.Episode) (imprint.Episode, bool, error) {
	scope := a.Scope()
	ep.Scope = scope
	// Episode ids are derived from the scope too, so one transcript can
	// be imported into several scopes.
	ep.ID = capture.DeriveEpisodeID(ep)
	prev, err := st.GetEpisode(ctx, scope, ep.ID)
	switch {
	case err == nil && len(prev.Turns) == len(ep.Turns) && prev.Status != imprint.EpisodeOpen:
		return ep, true, nil // captured before and unchanged
	case err != nil && !errors.Is(err, imprint.ErrNotFound):
		return ep, false, fmt.Errorf("import episode %s: %w", ep.ID, err)
	}
	return ep, false, nil
}

// importSources reads the sources (a few ahead of the one being
// imported, in parallel) and imports their transcripts in order: records
// their messages with rec, a chunk of transcripts at a time, and hands
// their episodes to the capture stage cs; in a dry run (est) it only
// counts them. When ex is not nil, each session is handed to it once its
// last transcript in the source is recorded, so capture and extraction
// run alongside the recording of the next transcripts. It returns the
// sessions seen, in order of first appearance.
func (a *App) importSources(ctx context.Context, sources []importSource, loc *time.Location, st imprint.Store, rec *record.Recorder,
	capRunner *capture.Runner, sum *importSummary, est *estimate, bar *importBar, cs *captureStage, ex *extractStage) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reads, release := readAhead(ctx, sources, loc)
	var sessions []string
	seen := map[string]bool{}
	for i, src := range sources {
		var rd sourceRead
		select {
		case rd = <-reads[i]:
			release()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		sum.Warnings = append(sum.Warnings, rd.warns...)
		if rd.err != nil {
			if errors.Is(rd.err, imprint.ErrInvalid) && len(sources) > 1 {
				// One bad file does not stop an import of many.
				sum.Warnings = append(sum.Warnings, importer.Warning{File: src.path, Message: rd.err.Error()})
				bar.advance(sum)
				continue
			}
			return nil, rd.err
		}
		var last map[string]int // lastBySession(rd.trs), when extracting
		for j := 0; j < len(rd.trs); j += recordChunk {
			// Record the next transcripts of the source together (one
			// transaction and one conversations-shard sync for many small
			// transcripts), then hand them to capture and their sessions
			// to extraction, which go on while the next ones are recorded.
			chunk := rd.trs[j:min(j+recordChunk, len(rd.trs))]
			if rec != nil {
				if err := a.recordChunk(ctx, rec, chunk, sum); err != nil {
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
					if err := a.estimateTranscript(ctx, st, tr, sum, est, capRunner != nil); err != nil {
						return nil, err
					}
				} else if cs != nil {
					if err := cs.add(tr); err != nil {
						return nil, err
					}
				}
			}
			bar.update(sum)
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
		bar.advance(sum)
	}
	return sessions, nil
}

// recordChunk is the most transcripts recorded together.
const recordChunk = 64

// recordChunk records the messages of trs with one RecordMany call.
func (a *App) recordChunk(ctx context.Context, rec *record.Recorder, trs []importer.Transcript, sum *importSummary) error {
	batch := make([]record.Session, 0, len(trs))
	for _, tr := range trs {
		if len(tr.Messages) > 0 {
			batch = append(batch, record.Session{SessionID: tr.SessionID, Messages: tr.Messages, BetweenPeople: tr.BetweenPeople})
		}
	}
	if len(batch) == 0 {
		return nil
	}
	res, err := rec.RecordMany(ctx, a.Scope(), batch)
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

// sourceRead is one source read into transcripts.
type sourceRead struct {
	trs   []importer.Transcript
	warns []importer.Warning
	err   error
}

// readAheadSources is how many sources are read ahead of the one being
// imported: enough to keep a reader busy while the writer works, few
// enough that a folder of large transcripts is not held in memory at once.
const readAheadSources = 4

// readAhead reads the sources with at most two readers, at most
// readAheadSources ahead of the consumer, each into its own channel (in
// source order). The consumer calls release after taking each read. The
// readers stop when ctx ends.
func readAhead(ctx context.Context, sources []importSource, loc *time.Location) (reads []chan sourceRead, release func()) {
	reads = make([]chan sourceRead, len(sources))
	for i := range reads {
		reads[i] = make(chan sourceRead, 1)
	}
	// A slot is taken before a source is handed to a reader, in source
	// order, and given back when the consumer took a read: the source the
	// consumer waits for always has its slot.
	slots := make(chan struct{}, readAheadSources)
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range sources {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range min(2, len(sources)) {
		go func() {
			for i := range next {
				trs, ws, err := readSource(sources[i], loc)
				reads[i] <- sourceRead{trs: trs, warns: ws, err: err}
			}
		}()
	}
	return reads, func() { <-slots }
}

// captureStage captures the episodes of the transcripts handed to it with
// a few workers, so that capture overlaps with recording the next
// transcripts and the work of one episode (steps, scores, vectors) with
// the store write of another. Episodes are independent: each has its own
// derived id and traces.
type captureStage struct {
	eps    chan captureJob
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc

	mu  sync.Mutex
	err error
	// refused is the LLM budget's refusal that stopped capture cleanly;
	// left counts the episodes not captured since.
	refused error
	left    int
	sum     importSummary // episodes and traces
	// warns are the warnings of each job, merged in job order at the end.
	warns map[int][]importer.Warning
	jobs  int
}

// captureJob is one episode of a transcript to capture.
type captureJob struct {
	n         int
	sessionID string
	ep        imprint.Episode
}

// Capture workers, queued episodes, and the most episodes saved in one
// transaction.
const (
	captureWorkers = 2
	captureQueue   = 256
	captureBatch   = 16
)

func (a *App) startCapture(ctx context.Context, st imprint.Store, capRunner *capture.Runner, bar *importBar) *captureStage {
	ctx, cancel := context.WithCancel(ctx)
	x := &captureStage{eps: make(chan captureJob, captureQueue), ctx: ctx, cancel: cancel, warns: map[int][]importer.Warning{}}
	for range captureWorkers {
		x.wg.Add(1)
		go func() {
			defer x.wg.Done()
			for j := range x.eps {
				// Take the episodes already waiting too, up to captureBatch,
				// and save them in one transaction.
				jobs := []captureJob{j}
			more:
				for len(jobs) < captureBatch {
					select {
					case j, ok := <-x.eps:
						if !ok {
							break more
						}
						jobs = append(jobs, j)
					default:
						break more
					}
				}
				x.mu.Lock()
				stopped := x.refused != nil
				if stopped {
					x.left += len(jobs)
				}
				x.mu.Unlock()
				if ctx.Err() != nil || stopped {
					continue // drain
				}
				sums, err := a.captureEpisodes(ctx, st, capRunner, jobs)
				x.mu.Lock()
				switch {
				case errors.Is(err, imprint.ErrLLMBudget):
					// A clean stop: the episodes captured so far are
					// saved, the others are captured by the next import.
					x.refused = err
					for _, one := range sums {
						if one.Episodes+one.EpisodesSkipped == 0 {
							x.left++
						}
					}
				case err != nil:
					if x.err == nil {
						x.err = err
					}
					cancel()
				}
				for i, one := range sums {
					x.sum.Episodes += one.Episodes
					x.sum.EpisodesSkipped += one.EpisodesSkipped
					x.sum.Traces += one.Traces
					if len(one.Warnings) > 0 {
						x.warns[jobs[i].n] = one.Warnings
					}
				}
				eps := x.sum.Episodes
				x.mu.Unlock()
				bar.episodes(eps)
			}
		}()
	}
	return x
}

// captureEpisodes captures the new or grown episodes of jobs with one
// RunMany (one store transaction) and returns each job's counts and
// warnings.
func (a *App) captureEpisodes(ctx context.Context, st imprint.Store, capRunner *capture.Runner, jobs []captureJob) ([]importSummary, error) {
	sums := make([]importSummary, len(jobs))
	var run []imprint.Episode
	var idx []int
	for i, j := range jobs {
		ep, skip, err := a.episodeToCapture(ctx, st, j.ep)
		if err != nil {
			return sums, err
		}
		if skip {
			sums[i].EpisodesSkipped++
			continue
		}
		run = append(run, ep)
		idx = append(idx, i)
	}
	if len(run) == 0 {
		return sums, nil
	}
	res, err := capRunner.RunMany(ctx, run, "")
	if err != nil && !errors.Is(err, imprint.ErrLLMBudget) {
		return sums, fmt.Errorf("capture episodes of %s: %w", jobs[idx[0]].sessionID, err)
	}
	// After a budget refusal res holds the episodes saved before it.
	for k, i := range idx[:len(res)] {
		sums[i].Episodes++
		sums[i].Traces += len(res[k].Traces)
		for _, w := range res[k].Warnings {
			sums[i].Warnings = append(sums[i].Warnings, importer.Warning{File: jobs[i].sessionID,
				Message: fmt.Sprintf("capture %s: %s/%s: %s", run[k].ID, w.Stage, w.Code, w.Message)})
		}
	}
	if err != nil {
		return sums, fmt.Errorf("capture episodes of %s: %w", jobs[idx[0]].sessionID, err)
	}
	return sums, nil
}

// add hands the episodes of a transcript to capture; it waits while the
// queue is full.
func (x *captureStage) add(tr importer.Transcript) error {
	for _, ep := range tr.Episodes {
		j := captureJob{n: x.jobs, sessionID: tr.SessionID, ep: ep}
		x.jobs++
		select {
		case x.eps <- j:
		case <-x.ctx.Done():
			x.mu.Lock()
			defer x.mu.Unlock()
			if x.err != nil {
				return x.err
			}
			return x.ctx.Err()
		}
	}
	return nil
}

// finish waits for the handed episodes to be captured; with abort it
// stops capture instead.
func (x *captureStage) finish(abort bool) error {
	if abort {
		x.cancel()
	}
	close(x.eps)
	x.wg.Wait()
	x.cancel()
	return x.err
}

// addTo adds the stage's counts and warnings to sum (once finished).
func (x *captureStage) addTo(sum *importSummary) {
	sum.Episodes += x.sum.Episodes
	sum.EpisodesSkipped += x.sum.EpisodesSkipped
	sum.Traces += x.sum.Traces
	for n := range x.jobs {
		sum.Warnings = append(sum.Warnings, x.warns[n]...)
	}
}

// extractStage runs extraction over the pending messages of the sessions
// handed to it, one session at a time, in the order they were handed, in
// its own goroutine, so that it overlaps with the import of the next
// sources. A failed window leaves its messages pending (a later import or
// imprint extract retries them) and is reported as a warning.
type extractStage struct {
	sessions chan string
	done     chan struct{}
	err      error
	mem      memoryDecisions
	warns    []importer.Warning
	ctx      context.Context
	cancel   context.CancelFunc
	// refused is the LLM budget's refusal that stopped extraction
	// cleanly: the sessions after it keep their messages pending.
	refused error
}

// extractQueue bounds the sessions waiting for extraction; extractBatch is
// the most extracted together.
const (
	extractQueue = 256
	extractBatch = 64
)

func startExtract(ctx context.Context, r *extract.Runner, scope imprint.Scope, bar *importBar) *extractStage {
	ctx, cancel := context.WithCancel(ctx)
	x := &extractStage{sessions: make(chan string, extractQueue), done: make(chan struct{}), ctx: ctx, cancel: cancel}
	go func() {
		defer close(x.done)
		for sid := range x.sessions {
			// Take the sessions already waiting too: without an LLM their
			// windows are planned together and their records lines synced
			// once.
			batch := []string{sid}
		drain:
			for len(batch) < extractBatch {
				select {
				case s, ok := <-x.sessions:
					if !ok {
						break drain
					}
					batch = append(batch, s)
				default:
					break drain
				}
			}
			if x.refused != nil {
				continue // stopped at the LLM budget: the rest stays pending
			}
			err := r.ExtractSessions(ctx, scope, batch, func(res extract.Result) {
				x.mem.Store += res.Decisions.Store
				x.mem.Update += res.Decisions.Update
				x.mem.Merge += res.Decisions.Merge
				x.mem.Skip += res.Decisions.Skip
				for _, w := range res.Warnings {
					if w.Code == imprint.ErrorCode(imprint.ErrLLMBudget) {
						continue // reported once, as the stop
					}
					x.warns = append(x.warns, importer.Warning{File: res.SessionID, Message: fmt.Sprintf("extract: %s/%s: %s", w.Stage, w.Code, w.Message)})
				}
				bar.memories(res.Decisions.Store + res.Decisions.Update + res.Decisions.Merge)
			}, func(sid string, err error) {
				if errors.Is(err, imprint.ErrLLMBudget) {
					x.refused = err
					return
				}
				x.warns = append(x.warns, importer.Warning{File: sid, Message: "extraction stopped, messages stay pending: " + err.Error()})
			})
			if err != nil {
				x.err = err
				return
			}
		}
	}()
	return x
}

// add hands a session to extraction; it waits while the queue is full. A
// session handed again (its messages came in several sources) is extracted
// again, for what is new.
func (x *extractStage) add(sid string) error {
	select {
	case x.sessions <- sid:
		return nil
	case <-x.done:
		if x.err != nil {
			return x.err
		}
		return errors.New("extraction stopped")
	case <-x.ctx.Done():
		return x.ctx.Err()
	}
}

// finish waits for the handed sessions to be extracted; with abort it
// stops extraction at its next window instead.
func (x *extractStage) finish(abort bool) error {
	if abort {
		x.cancel()
	}
	close(x.sessions)
	<-x.done
	x.cancel()
	return x.err
}

// addTo adds the stage's counts and warnings to sum (once finished).
func (x *extractStage) addTo(sum *importSummary) {
	sum.Memories.Store += x.mem.Store
	sum.Memories.Update += x.mem.Update
	sum.Memories.Merge += x.mem.Merge
	sum.Memories.Skip += x.mem.Skip
	sum.Warnings = append(sum.Warnings, x.warns...)
}

func (a *App) printImportSummary(s *importSummary) {
	if s.DryRun {
		a.Printf("dry run: nothing was written\n")
	}
	a.Printf("files %d, transcripts %d\n", s.Files, s.Transcripts)
	a.Printf("messages: %d recorded, %d skipped (already recorded or empty)\n", s.MessagesRecorded, s.MessagesSkipped)
	a.Printf("episodes: %d captured into %d traces, %d unchanged\n", s.Episodes, s.Traces, s.EpisodesSkipped)
	a.Printf("memories: %d stored, %d updated, %d merged, %d skipped as duplicates\n", s.Memories.Store, s.Memories.Update, s.Memories.Merge, s.Memories.Skip)
	a.Printf("LLM: %d calls, %d prompt + %d completion tokens", s.LLMCalls, s.PromptTokens, s.CompletionTokens)
	if !s.LLMConfigured {
		a.Printf(" (no LLM configured: heuristic extraction, neutral α)")
	}
	a.Printf("\n")
	if s.LLMBudgetReached {
		a.Printf("stopped at the LLM budget: %d episodes not captured and %d messages not extracted yet; run the same import again to resume\n",
			s.EpisodesLeft, s.PendingMessages)
	}
	if s.EstimatedLLMCalls != nil {
		a.Printf("a real import with an LLM would make about %d LLM calls with about %d prompt tokens\n", *s.EstimatedLLMCalls, *s.EstimatedPromptTokens)
	}
	for i, w := range s.Warnings {
		if i == 20 {
			a.Printf("… and %d more warnings (see --json)\n", len(s.Warnings)-20)
			break
		}
		loc := w.File
		if w.Line > 0 {
			loc = fmt.Sprintf("%s:%d", w.File, w.Line)
		}
		a.Printf("warning: %s: %s\n", loc, w.Message)
	}
}

// collectSources expands paths into the files (and Claude Code folders) to
// read, with each one's format. Files of unknown format inside folders are
// skipped with a warning; a named file of unknown format is an error.
func collectSources(paths []string, format string) ([]importSource, []importer.Warning, error) {
	var out []importSource
	var warns []importer.Warning
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, nil, imprint.Invalidf("%s: %v", p, err)
		}
		if !info.IsDir() {
			f, err := fileFormat(p, format)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, importSource{path: p, format: f})
			continue
		}
		srcs, ws, err := walkDir(p, format)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, srcs...)
		warns = append(warns, ws...)
	}
	if len(out) == 0 {
		return nil, warns, imprint.Invalidf("no transcripts found in %s", strings.Join(paths, ", "))
	}
	return out, warns, nil
}

// walkDir finds transcripts under dir. A folder holding Claude Code session
// files is one source, read with its sub-agent files.
func walkDir(dir, format string) ([]importSource, []importer.Warning, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, imprint.Invalidf("%s: %v", dir, err)
	}
	var out []importSource
	var warns []importer.Warning
	ccDir := false
	var files, subdirs []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		if e.IsDir() {
			subdirs = append(subdirs, p)
			continue
		}
		if !strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		f, err := fileFormat(p, format)
		if err != nil {
			warns = append(warns, importer.Warning{File: p, Message: "skipped: " + err.Error()})
			continue
		}
		if f == importer.FormatClaudeCode {
			ccDir = true
			continue
		}
		files = append(files, p)
		out = append(out, importSource{path: p, format: f})
	}
	if ccDir {
		out = append(out, importSource{path: dir, format: importer.FormatClaudeCode, ccDir: true})
	}
	for _, sd := range subdirs {
		// A Claude Code folder's <session>/subagents files belong to it.
		if ccDir {
			continue
		}
		srcs, ws, err := walkDir(sd, format)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, srcs...)
		warns = append(warns, ws...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, warns, nil
}

// fileFormat returns the format of the file at p: the --format given, or
// sniffed from its head. --format openai also covers τ-bench trajectories.
func fileFormat(p, format string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", imprint.Invalidf("%s: %v", p, err)
	}
	defer f.Close()
	head := make([]byte, importer.SniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", imprint.Invalidf("%s: %v", p, err)
	}
	sniffed, serr := importer.Sniff(p, bytes.Clone(head[:n]))
	switch {
	case format == "auto":
		return sniffed, serr
	case format == importer.FormatOpenAI && sniffed == importer.FormatTauBench:
		return importer.FormatTauBench, nil
	}
	return format, nil
}

// readSource reads one source into transcripts.
func readSource(src importSource, loc *time.Location) ([]importer.Transcript, []importer.Warning, error) {
	if src.ccDir {
		return importer.ReadClaudeCodeDir(src.path)
	}
	f, err := os.Open(src.path)
	if err != nil {
		return nil, nil, imprint.Invalidf("%s: %v", src.path, err)
	}
	defer f.Close()
	var trs []importer.Transcript
	switch src.format {
	case importer.FormatClaudeCode:
		var tr importer.Transcript
		tr, err = importer.ReadClaudeCode(f, src.path)
		trs = []importer.Transcript{tr}
	case importer.FormatOpenClaw:
		var tr importer.Transcript
		tr, err = importer.ReadOpenClaw(f, src.path)
		trs = []importer.Transcript{tr}
	case importer.FormatOpenAI:
		trs, err = importer.ReadOpenAIChat(f, src.path)
	case importer.FormatTauBench:
		trs, err = importer.ReadTauBench(f, src.path)
	case importer.FormatChatGPT:
		trs, err = importer.ReadChatGPT(f, src.path)
	case importer.FormatLoCoMo:
		trs, err = importer.ReadLoCoMo(f, src.path, loc)
	case importer.FormatImprint:
		trs, err = importer.ReadImprint(f, src.path)
	default:
		return nil, nil, imprint.Invalidf("%s: unknown format %q", src.path, src.format)
	}
	if err != nil {
		return nil, nil, err
	}
	return trs, nil, nil
}

// importBar shows progress on stderr when it is a terminal; otherwise all
// its methods do nothing. It is safe for concurrent use (extraction counts
// memories while the import goes on).
type importBar struct {
	bar *progressbar.ProgressBar

	files int // sources to import

	mu             sync.Mutex
	done           int // sources imported
	msgs, eps, mem int
}

// barThrottle is the least time between two drawings of the progress bar.
const barThrottle = 100 * time.Millisecond

// progress returns the import's progress bar over files sources: drawn on
// Stderr when it is a terminal, else one that does nothing.
func (a *App) progress(files int) *importBar {
	if !a.terminal(a.Stderr) {
		return &importBar{}
	}
	return newImportBar(a.Stderr, files, barThrottle)
}

// terminal reports whether w is a terminal (a.isTerminal when set).
func (a *App) terminal(w io.Writer) bool {
	if a.isTerminal != nil {
		return a.isTerminal(w)
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newImportBar draws a bar over files sources on w, at most once per
// throttle, with the counts of messages, episodes and memories as its
// description; it is cleared when finished.
func newImportBar(w io.Writer, files int, throttle time.Duration) *importBar {
	return &importBar{files: files, bar: progressbar.NewOptions(files,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("importing"),
		progressbar.OptionThrottle(throttle),
		progressbar.OptionClearOnFinish(),
	)}
}

// describe shows the counts; b.mu is held.
func (b *importBar) describe() {
	b.bar.Describe(fmt.Sprintf("files %d/%d · messages %d · episodes %d · memories %d", b.done, b.files, b.msgs, b.eps, b.mem))
}

func (b *importBar) update(s *importSummary) {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = s.MessagesRecorded
	b.eps = max(b.eps, s.Episodes)
	b.describe()
}

// episodes sets the number of episodes captured.
func (b *importBar) episodes(n int) {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.eps = n
	b.describe()
}

// memories adds n extracted memories.
func (b *importBar) memories(n int) {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mem += n
	b.describe()
}

func (b *importBar) advance(s *importSummary) {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	b.done++
	b.mu.Unlock()
	b.update(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.bar.Add(1)
}

func (b *importBar) finish() {
	if b.bar == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.bar.Finish()
}
