package extract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// Batch sizes of ExtractSessions without an LLM.
const (
	// batchPage is the most pending messages of a session read at once.
	batchPage = 1024
	// batchWindows is the most windows planned before their lines are
	// logged and their memories stored.
	batchWindows = 256
)

// ExtractSessions runs ExtractPending over each session in turn, calling
// each (when not nil) with every window's result, and stopped (when not
// nil) with the error of a session whose extraction stopped at a failed
// window (its messages stay pending); the other sessions go on. It returns
// only a context error.
//
// With an LLM it is exactly one ExtractPending after another. Without one
// (the heuristic extractor, deterministic, and the exact-text pre-check as
// the only dedup) the windows of many sessions are planned together, a
// few sessions ahead of the writes: the pending messages of a session are
// read a page at a time rather than per window, each window is extracted
// and, in session order, deduplicated as if the windows before it were
// already stored (their content hashes count as stored); then the
// records-shard lines of all planned windows are appended with one write
// and sync per day file, the memories are stored in order (those of the
// windows up to the next one run alone in one transaction when the store
// is an imprint.MemoryBatchWriter, else, or when that transaction fails,
// each in its own), and each session's cursor moves once, past its last
// window stored. The memories, decisions and results are those of running the
// windows one by one; only the log is synced less often and the cursor
// moved less often, and the log is still written before the store. A
// batch that stops half-way is redone from the cursor and gives the same
// memories under the same ids (assignIDs): those stored already are
// skipped as duplicates (or rewritten in place when dedup is off), and a
// replay reads the log's repeated lines of a memory as one. Memories
// logged but not stored because the store failed are withdrawn in the log,
// and the windows after a failed one are deduplicated again, so that they
// do not skip the memories it did not store.
func (r *Runner) ExtractSessions(ctx context.Context, scope imprint.Scope, sessionIDs []string, each func(Result), stopped func(sessionID string, err error)) error {
	stop := func(sid string, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if stopped != nil {
			stopped(sid, err)
		}
		return nil
	}
	if r.d.LLM != nil {
		for _, sid := range sessionIDs {
			if err := r.ExtractPending(ctx, scope, sid, each); err != nil {
				if err := stop(sid, err); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return r.extractHeuristicSessions(ctx, scope.WithDefaults(), sessionIDs, each, stop)
}

// prefetchSessions is how many sessions of a batch the planner reads at
// once from a PendingBatchReader: their first pages are held until they
// are planned, as planAhead holds planned chunks.
const prefetchSessions = 16

// planAhead is how many chunks of windows are planned ahead of the ones
// being written.
const planAhead = 8

// plannedSession is windows of a session, planned (a chunk of its first
// page), or the error that stopped its planning.
type plannedSession struct {
	sid     string
	windows []*plannedWindow
	more    bool
	err     error
}

// extractHeuristicSessions is ExtractSessions without an LLM. Planning (a
// session's reads, the heuristic extractor, vectors) runs in its own
// goroutine, a few sessions ahead of the commits, which stay in session
// order: deduplication is at commit time, so a session's memories are
// checked against those of every session before it.
func (r *Runner) extractHeuristicSessions(ctx context.Context, scope imprint.Scope, sessionIDs []string, each func(Result), stop func(string, error) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A session listed twice is extracted once: the second time nothing
	// would be pending.
	var sids []string
	seen := map[string]bool{}
	for _, sid := range sessionIDs {
		if !seen[sid] {
			seen[sid] = true
			sids = append(sids, sid)
		}
	}
	failed := map[string]bool{}
	ch := make(chan plannedSession, planAhead)
	// The planner reads the store: every return stops it, drains what it
	// sent and waits for it, so that no read outlives the call (the caller
	// may close the store as soon as it returns).
	var planner sync.WaitGroup
	defer func() {
		cancel()
		for range ch {
		}
		planner.Wait()
	}()
	planner.Add(1)
	go func() {
		defer planner.Done()
		defer close(ch)
		send := func(ps plannedSession) bool {
			select {
			case ch <- ps:
				return true
			case <-ctx.Done():
				return false
			}
		}
		pr, batched := imprint.AsPendingBatchReader(r.d.Store)
		for start := 0; start < len(sids); start += prefetchSessions {
			group := sids[start:min(start+prefetchSessions, len(sids))]
			// With a PendingBatchReader, the sessions of the group and
			// their first pages are read at once; a failed read leaves each
			// session to read its own.
			var pre []imprint.SessionPending
			if batched {
				if got, err := pr.PendingBatch(ctx, scope, group, batchPage); err == nil && len(got) == len(group) {
					pre = got
				} else if ctx.Err() != nil {
					return
				}
			}
			if !r.planGroup(ctx, scope, group, pre, send) {
				return
			}
		}
	}()
	for first := range ch {
		// Commit together what is planned already, up to batchWindows
		// windows, ending at a session with more pages (whose next pages
		// come before the sessions after it).
		batch := []plannedSession{first}
		n := len(first.windows)
	gather:
		for !batch[len(batch)-1].more && n < batchWindows {
			select {
			case ps, ok := <-ch:
				if !ok {
					break gather
				}
				batch = append(batch, ps)
				n += len(ps.windows)
			default:
				break gather
			}
		}
		var plan []*plannedWindow
		for _, ps := range batch {
			if ps.err != nil {
				failed[ps.sid] = true
				if err := stop(ps.sid, ps.err); err != nil {
					return err
				}
				continue
			}
			plan = append(plan, ps.windows...)
		}
		r.runPlanned(ctx, scope, plan, failed, each, stop)
		if err := ctx.Err(); err != nil {
			return err
		}
		last := batch[len(batch)-1]
		for last.more && last.err == nil && !failed[last.sid] {
			ws, more, err := r.planSession(ctx, scope, last.sid)
			if err != nil {
				if err := stop(last.sid, err); err != nil {
					return err
				}
				break
			}
			r.runPlanned(ctx, scope, ws, failed, each, stop)
			if err := ctx.Err(); err != nil {
				return err
			}
			last.more = more
		}
	}
	return ctx.Err()
}

// plannedWindow is one window of a batch, extracted and deduplicated, its
// changes planned but not written.
type plannedWindow struct {
	sessionID string
	w         Window
	res       Result
	met       windowMetrics
	b         *applyBatch
	steps     []applyStep
	lastScene string
	// mems are the window's extracted memories, embedded, before dedup.
	mems []imprint.Memory
	// single is set for a window that could not be cut from a page (too
	// many rejected messages in a row): it runs alone, as ExtractNext.
	single bool
	// base is res as extracted, before dedup; planning starts from it.
	base Result
	// logWarns are the warnings of logging the window's lines.
	logWarns []Warning
}

// planSession cuts the next windows of a session out of one page of its
// pending messages and extracts them. more is true when the page did not
// hold all pending messages.
func (r *Runner) planSession(ctx context.Context, scope imprint.Scope, sid string) ([]*plannedWindow, bool, error) {
	var out []*plannedWindow
	var more bool
	err := r.planSessionChunks(ctx, scope, sid, nil, 0, func(ws []*plannedWindow, m bool) bool {
		out, more = append(out, ws...), m
		return true
	})
	return out, more, err
}

// planChunk is how many windows of a session are extracted before they
// are handed on, so that the writes of a long session start while its
// later windows are still being extracted.
const planChunk = 8

// planWorkers is how many sessions of a group the planner plans at once:
// a session's windows are planned in order (each starts from the scene
// the one before it ended in), different sessions' on different cores.
const planWorkers = 2

// planGroup plans the sessions of group (pre their reads when not nil),
// planWorkers at a time, and sends the chunks of each session in the
// group's order: those of the first session not yet sent as they are
// planned, those of the sessions after it once it is sent. A session whose
// planning fails sends its error. It reports false when a send did not go
// through (ctx is done), and returns once no planning of the group runs.
func (r *Runner) planGroup(ctx context.Context, scope imprint.Scope, group []string, pre []imprint.SessionPending, send func(plannedSession) bool) bool {
	chunks := make([]chan plannedSession, len(group))
	var wg sync.WaitGroup
	defer wg.Wait()
	start := func(i int) {
		// Room for a page's chunks: a session ahead of the one being
		// sent rarely waits.
		chunks[i] = make(chan plannedSession, batchPage/planChunk+2)
		wg.Go(func() {
			defer close(chunks[i])
			put := func(ps plannedSession) bool {
				select {
				case chunks[i] <- ps:
					return true
				case <-ctx.Done():
					return false
				}
			}
			var read *imprint.SessionPending
			if pre != nil {
				read = &pre[i]
			}
			sid := group[i]
			err := r.planSessionChunks(ctx, scope, sid, read, planChunk, func(ws []*plannedWindow, more bool) bool {
				return put(plannedSession{sid: sid, windows: ws, more: more})
			})
			if err != nil {
				put(plannedSession{sid: sid, err: err})
			}
		})
	}
	// At most planWorkers sessions are being planned or sent.
	next := min(planWorkers, len(group))
	for i := range next {
		start(i)
	}
	for i := range group {
		for p := range chunks[i] {
			// A window's memories are written at the time it is handed
			// on, as when the sessions are planned one after another:
			// in the sessions' order.
			for _, pw := range p.windows {
				if pw.b != nil {
					pw.b.now = imprint.At(r.now())
				}
			}
			if !send(p) {
				return false
			}
		}
		if next < len(group) {
			start(next)
			next++
		}
	}
	return true
}

// planSessionChunks is planSession handing the windows on to emit as they
// are extracted, chunk at a time (all at once when chunk is 0); more is
// set on the last call only. emit returns false to stop. read, when not
// nil, is the session and its first page read already (PendingBatch);
// else they are read here.
func (r *Runner) planSessionChunks(ctx context.Context, scope imprint.Scope, sid string, read *imprint.SessionPending, chunk int, emit func(ws []*plannedWindow, more bool) bool) error {
	if read == nil {
		read = &imprint.SessionPending{}
		sess, err := r.d.Store.GetSession(ctx, scope, sid)
		switch {
		case err == nil:
			read.Session, read.Found = sess, true
		case !errors.Is(err, imprint.ErrNotFound):
			return fmt.Errorf("read session: %w", err)
		}
		if read.Pending, err = r.d.Store.PendingMessages(ctx, scope, sid, batchPage); err != nil {
			return fmt.Errorf("read pending messages: %w", err)
		}
	}
	var st sessionState
	var cursor int64
	if read.Found {
		st = sessionState{known: true, scene: read.Session.LastSceneName, people: read.Session.BetweenPeople}
		cursor = read.Session.Cursor
	}
	pending := read.Pending
	complete := len(pending) < batchPage
	gate := gateMemo{}
	maxNew := r.cfg.MaxMessagesPerExtraction
	var windows []Window
	for rest := pending; len(rest) > 0; {
		consumed, rejected, needMore := gate.plan(rest, maxNew, complete)
		if needMore || len(consumed) == 0 {
			break
		}
		windows = append(windows, Window{New: gate.qualified(consumed), Consumed: consumed, Rejected: rejected})
		rest = rest[len(consumed):]
	}
	if len(windows) == 0 {
		if len(pending) > 0 {
			// The page ends inside the first window: that one goes alone.
			emit([]*plannedWindow{{sessionID: sid, single: true}}, true)
			return nil
		}
		emit(nil, false)
		return nil
	}
	more := !complete
	if n := r.cfg.MaxBackgroundMessages; n > 0 {
		// Background: the qualified messages before each window, from the
		// store for the first and from the page after that. Before the
		// first pending message there are only the messages up to the
		// cursor: none for a session never extracted (seqs start at 1),
		// the usual case of an import, which so reads nothing more.
		var bg []imprint.Message
		if cursor > 0 {
			var err error
			if bg, err = backgroundBefore(ctx, r.d.Store, gate, scope, sid, windows[0].Consumed[0].Seq, n); err != nil {
				return err
			}
		}
		qual := append([]imprint.Message(nil), bg...)
		for i := range windows {
			qual = append(qual, windows[i].New...)
			_, bg := SplitWindow(qual, len(windows[i].New), n)
			windows[i].Background = append([]imprint.Message(nil), bg...)
			qual = qual[max(len(qual)-n, 0):]
		}
	}
	if chunk <= 0 {
		chunk = len(windows)
	}
	var out []*plannedWindow
	for i, w := range windows {
		pw := &plannedWindow{sessionID: sid, w: w}
		pw.lastScene = r.extractHeuristic(ctx, scope, pw, st)
		st.scene = pw.lastScene
		out = append(out, pw)
		if last := i == len(windows)-1; last || len(out) == chunk {
			if !emit(out, more && last) {
				return nil
			}
			out = nil
		}
	}
	return nil
}

// extractHeuristic runs the heuristic extractor over a planned window of
// a session in state st and returns its last scene name.
func (r *Runner) extractHeuristic(ctx context.Context, scope imprint.Scope, pw *plannedWindow, st sessionState) string {
	start := r.now()
	pw.res = newResult(pw.sessionID)
	pw.met = windowMetrics{start: start, extractor: imprint.ExtractorHeuristic}
	startWindow(&pw.res, &pw.met, pw.w)
	// Without an LLM (the batch path) the extraction cannot fail.
	mems, lastScene, _ := r.extractWindow(ctx, scope, pw.sessionID, st, pw.w, &pw.res)
	pw.met.extractDur = r.now().Sub(start)
	pw.res.ExtractedCount = len(mems)
	pw.res.LastSceneName = lastScene
	pw.b = newApplyBatch(scope, pw.sessionID, imprint.ExtractorHeuristic, r.now(), pw.w)
	if len(mems) > 0 {
		r.embedAll(ctx, mems, &pw.res)
	}
	pw.mems = mems
	pw.res.Warnings = slices.Clip(pw.res.Warnings)
	pw.base = pw.res
	return lastScene
}

// runPlanned deduplicates and plans the windows in order, logs all their
// lines, then stores each window's memories and moves its session's
// cursor. It adds the sessions that stop at a failed window to failed, and
// skips (withdraws) the windows of sessions in failed. When a window fails,
// the windows after it that counted its session's memories as stored are
// planned again (replan).
func (r *Runner) runPlanned(ctx context.Context, scope imprint.Scope, plan []*plannedWindow, failed map[string]bool, each func(Result), stop func(string, error) error) {
	lines := r.planWindows(ctx, scope, plan, failed)
	// settled is set when every memory the batch's markers list is stored
	// or withdrawn; the markers then go, else they stay to be recovered.
	settled := false
	var markers []*inflightMarker
	defer func() {
		for _, mk := range markers {
			r.endInflight(mk, settled)
		}
	}()
	if r.d.Records != nil && len(plan) > 0 {
		var res Result
		// Windows of these sessions interrupted by a crash between their
		// log and their store writes are settled before this batch logs.
		keys := map[string]bool{}
		for _, pw := range plan {
			if !pw.single && !failed[pw.sessionID] {
				keys[sessionKey(scope, pw.sessionID)] = true
			}
		}
		if err := r.recoverInflight(ctx, keys); err != nil {
			r.log().Warn("recover interrupted windows", "error", err)
			res.warn("records", "inflight_recovery_failed", err.Error())
		}
		if len(lines) > 0 {
			markers = append(markers, r.logPlanned(plan, lines, &res))
		}
		// A log failure is reported on every window that had lines.
		for _, pw := range plan {
			if len(pw.steps) > 0 {
				pw.logWarns = res.Warnings
			}
		}
	}
	// Each session's cursor moves once per batch, past its last window
	// stored: a window stopped before that is redone, and gives the same
	// memories under the same ids, which are then stored already (so
	// skipped) or written in place. Window results are passed on once the
	// cursor moved.
	var withdrawn []applyStep
	var held []*plannedWindow
	// The memories of a run of windows (up to the next window run alone)
	// are written together when the store can; tried marks the windows of
	// the runs written so, stored those whose memories it wrote.
	tried, stored := map[*plannedWindow]bool{}, map[*plannedWindow]bool{}
	// The cursors of the sessions held move together (flush): before a
	// window run alone, which reads its session's cursor, after a failed
	// window and at the end.
	flush := func() error {
		if len(held) == 0 {
			return nil
		}
		errs := r.advanceCursors(ctx, scope, held)
		var stopped []string
		for _, pw := range held {
			err := errs[pw.sessionID]
			r.finishPlanned(ctx, scope, pw, "persist", err)
			if each != nil {
				each(pw.res)
			}
			if err != nil && !failed[pw.sessionID] {
				failed[pw.sessionID] = true
				stopped = append(stopped, pw.sessionID)
			}
		}
		held = held[:0]
		var first error
		for _, sid := range stopped {
			if err := stop(sid, errs[sid]); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	for i, pw := range plan {
		if failed[pw.sessionID] {
			// Logged, but the session stopped before this window.
			withdrawn = append(withdrawn, pw.steps...)
			continue
		}
		if pw.single {
			if err := flush(); err != nil {
				return
			}
			if failed[pw.sessionID] {
				continue // the flush stopped the session
			}
			// Run the session's next window alone, then leave the session
			// for the next round.
			res, _, err := r.ExtractNext(ctx, scope, pw.sessionID)
			if (len(res.MessageIDs) > 0 || !res.Success) && each != nil {
				each(res)
			}
			if err != nil {
				failed[pw.sessionID] = true
				if stop(pw.sessionID, err) != nil {
					return
				}
			}
			continue
		}
		pw.res.Warnings = append(pw.res.Warnings, pw.logWarns...)
		if !tried[pw] {
			run := togetherRun(plan[i:], failed)
			for _, w := range run {
				tried[w] = true
			}
			if r.putTogether(ctx, run) {
				for _, w := range run {
					stored[w] = true
				}
			}
		}
		if stored[pw] {
			for _, s := range pw.steps {
				s.stored(&pw.res)
			}
			held = append(held, pw)
			continue
		}
		if err := r.applySteps(ctx, pw.b, pw.steps, &pw.res); err != nil {
			if flush() != nil {
				return
			}
			// The flush may have stopped the session already: it is
			// reported once.
			stopped := failed[pw.sessionID]
			failed[pw.sessionID] = true
			r.finishPlanned(ctx, scope, pw, "persist", err)
			if each != nil {
				each(pw.res)
			}
			if !stopped && stop(pw.sessionID, err) != nil {
				return
			}
			gone, mk := r.replan(ctx, scope, pw, plan[i+1:], failed)
			withdrawn = append(withdrawn, gone...)
			if mk != nil {
				markers = append(markers, mk)
			}
			continue
		}
		held = append(held, pw)
	}
	if flush() != nil {
		return
	}
	if len(withdrawn) > 0 {
		var res Result
		r.withdraw(plan[0].b, withdrawn, &res)
	}
	settled = true
	for _, pw := range plan {
		if pw.b != nil && pw.b.unsettled {
			settled = false
		}
	}
}

// settleTimeout bounds the cursor moves of windows already stored when the
// extraction is cancelled.
const settleTimeout = 5 * time.Second

// advanceCursors moves the cursor of each session of held past its last
// window there, all in one AdvanceCursors when the store can, else (or when
// that fails) one AdvanceCursor each, and returns the error of each session
// whose cursor did not move. The windows held are stored: when ctx is done,
// before or during a move, their cursors still move (within
// settleTimeout), so that a cancelled extraction redoes only what it did
// not store, as when each session's cursor moved as soon as the next
// session began.
func (r *Runner) advanceCursors(ctx context.Context, scope imprint.Scope, held []*plannedWindow) map[string]error {
	settled := false
	cancel := func() {}
	defer func() { cancel() }()
	// live returns ctx, or once ctx is done a context that is not, for the
	// moves of what is stored.
	live := func() context.Context {
		if ctx.Err() != nil && !settled {
			ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
			settled = true
		}
		return ctx
	}
	// Each session once, past its last window held (the furthest).
	var moves []imprint.CursorMove
	now := r.now()
	for _, pw := range held {
		moves = append(moves, imprint.CursorMove{SessionID: pw.sessionID, ToSeq: pw.w.LastSeq(), LastScene: pw.lastScene, At: now})
	}
	moves, _ = imprint.MergeCursorMoves(moves) // every window has a session
	// move runs a move, again with the settled context when ctx ended
	// during it.
	move := func(f func(context.Context) error) error {
		err := f(live())
		if err != nil && !settled && ctx.Err() != nil {
			err = f(live())
		}
		return err
	}
	errs := map[string]error{}
	if ca, ok := imprint.AsCursorBatchAdvancer(r.d.Store); ok {
		err := move(func(ctx context.Context) error { return ca.AdvanceCursors(ctx, scope, moves) })
		if err == nil {
			return errs
		}
		if ctx.Err() == nil || settled {
			r.log().Warn("advance cursors together failed; one by one", "sessions", len(moves), "error", err)
		}
	}
	for _, m := range moves {
		err := move(func(ctx context.Context) error {
			return r.d.Store.AdvanceCursor(ctx, scope, m.SessionID, m.ToSeq, m.LastScene, m.At)
		})
		if err != nil {
			errs[m.SessionID] = fmt.Errorf("advance cursor: %w", err)
		}
	}
	return errs
}

// togetherRun returns the windows of ws whose memories can be written
// together, from the first: up to the next window run alone (whose
// extraction reads the store as the windows before it left it), leaving
// out those of sessions in failed.
func togetherRun(ws []*plannedWindow, failed map[string]bool) []*plannedWindow {
	var run []*plannedWindow
	for _, pw := range ws {
		if pw.single {
			break
		}
		if !failed[pw.sessionID] {
			run = append(run, pw)
		}
	}
	return run
}

// planWindows deduplicates and plans the windows in order, each as if the
// windows before it were stored (their content hashes count as stored),
// starting from their results as extracted, and returns their lines. The
// windows of sessions in failed keep the steps they have.
func (r *Runner) planWindows(ctx context.Context, scope imprint.Scope, ws []*plannedWindow, failed map[string]bool) []any {
	// planned holds the content hashes the windows before store, with
	// their memories' workspaces.
	planned := map[string][]string{}
	// The store is only read while planning: which hashes are live is
	// asked once for every window.
	live := r.liveHashes(ctx, scope, ws, failed)
	var lines []any
	for _, pw := range ws {
		if pw.single || len(pw.mems) == 0 || failed[pw.sessionID] {
			continue
		}
		pw.res = pw.base
		t0 := r.now()
		out := r.dedupOver(ctx, scope, pw.mems, planned, live)
		pw.met.dedupDur = r.now().Sub(t0)
		pw.res.Warnings = append(pw.res.Warnings, out.warnings...)
		steps, err := r.planAll(ctx, pw.b, pw.mems, out, &pw.res)
		if err != nil {
			// Only liveTargets reads the store in planning, and only for
			// updates, which need an LLM; kept for safety.
			pw.single, pw.steps = true, nil
			continue
		}
		pw.steps = steps
		for _, s := range steps {
			planned[s.m.ContentHash] = append(planned[s.m.ContentHash], s.m.Workspace)
			lines = append(lines, s.lines...)
		}
	}
	return lines
}

// logPlanned durably writes a batch marker listing the steps of the
// windows that have steps in ws, then appends lines (theirs) to the log.
// It returns the marker (nil when none was written).
func (r *Runner) logPlanned(ws []*plannedWindow, lines []any, res *Result) *inflightMarker {
	var entries []inflightEntry
	var first *applyBatch
	for _, pw := range ws {
		if len(pw.steps) > 0 {
			entries = append(entries, stepEntry(pw.b, pw.steps))
			if first == nil {
				first = pw.b
			}
		}
	}
	if first == nil {
		return nil
	}
	mk, err := r.beginInflight(batchMarkerPrefix, first.now, entries)
	if err != nil {
		res.warn("records", "inflight_marker_failed", err.Error())
	}
	r.appendRecords(first, lines, res)
	return mk
}

// replan plans again the windows rest after stopped, the failed window of
// a session now in failed. The memories of stopped that were not written
// and those of its session's later windows are not stored, so a window in
// rest that skipped one of them as planned already must store it after
// all, as it would had the windows run one by one: rest is planned again
// against the store, which holds what was written so far. The memories new
// to the plan are logged, under a marker of their own (returned); the
// steps no longer planned are returned, to be withdrawn.
func (r *Runner) replan(ctx context.Context, scope imprint.Scope, stopped *plannedWindow, rest []*plannedWindow, failed map[string]bool) ([]applyStep, *inflightMarker) {
	lost := map[string]bool{}
	for _, s := range stopped.steps {
		lost[s.m.ContentHash] = true
	}
	affected := false
	for _, pw := range rest {
		if pw.sessionID == stopped.sessionID {
			for _, s := range pw.steps {
				lost[s.m.ContentHash] = true
			}
			continue
		}
		if failed[pw.sessionID] || pw.single {
			continue
		}
		for _, m := range pw.mems {
			affected = affected || lost[m.ContentHash]
		}
	}
	if !affected {
		return nil, nil
	}
	old := make([][]applyStep, len(rest))
	for i, pw := range rest {
		old[i] = pw.steps
	}
	r.planWindows(ctx, scope, rest, failed)
	var gone []applyStep
	// added are the new steps of the windows logged again.
	var added, logged []*plannedWindow
	var lines []any
	for i, pw := range rest {
		was := map[string]bool{}
		for _, s := range old[i] {
			was[s.m.ID] = true
		}
		is := map[string]bool{}
		var fresh []applyStep
		for _, s := range pw.steps {
			is[s.m.ID] = true
			if !was[s.m.ID] {
				fresh = append(fresh, s)
				lines = append(lines, s.lines...)
			}
		}
		for _, s := range old[i] {
			if !is[s.m.ID] {
				gone = append(gone, s)
			}
		}
		if len(fresh) > 0 {
			added = append(added, &plannedWindow{b: pw.b, steps: fresh})
			logged = append(logged, pw)
		}
	}
	if r.d.Records == nil || len(lines) == 0 {
		return gone, nil
	}
	var res Result
	mk := r.logPlanned(added, lines, &res)
	for _, pw := range logged {
		pw.logWarns = append(slices.Clip(pw.logWarns), res.Warnings...)
	}
	return gone, mk
}

// finishPlanned completes a planned window's result and logs its metric:
// failed at stage with err, or successful when err is nil.
func (r *Runner) finishPlanned(ctx context.Context, scope imprint.Scope, pw *plannedWindow, stage string, err error) {
	pw.res.Success = err == nil
	if err != nil {
		pw.res.warn(stage, imprint.ErrorCode(err), err.Error())
	}
	pw.res.Warnings = capWarnings(pw.res.Warnings)
	pw.met.all = r.now().Sub(pw.met.start)
	logMetric(ctx, r.log(), scope, pw.res, pw.met)
}
