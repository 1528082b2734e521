package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/promptguard"
)

// Shard line ops (CONTRACTS §6).
const (
	OpLineStore     = "store"
	OpLineUpdate    = "update"
	OpLineMerge     = "merge"
	OpLineSupersede = "supersede"
	// OpLineWithdraw says that the change logged last for the memory was
	// not applied: the store failed after the window's lines were logged.
	// ReplayWith drops the memory's earlier lines (a later line, when the
	// window is redone, counts again).
	OpLineWithdraw = "withdraw"
)

// RecordLine is one line of the records shard: a change to a memory.
type RecordLine struct {
	Op     string         `json:"op"`
	At     imprint.Time   `json:"at"`
	Memory imprint.Memory `json:"memory"`
}

// applyBatch is the state of applying one window's decisions.
type applyBatch struct {
	scope     imprint.Scope
	sessionID string
	extractor string
	now       imprint.Time
	// msgTimes are the times of the window's new messages, by id.
	msgTimes map[string]imprint.Time
	// replacedBy maps a memory replaced in this batch to its new version,
	// so a later decision on the same target lands on the latest version.
	replacedBy map[string]string
	// written are the memories written in this batch, by id.
	written map[string]imprint.Memory
	// marker lists the memories of the window while they are written.
	marker *inflightMarker
	// unsettled is set when a withdraw could not be logged: the marker
	// stays, for a later window of the session to recover.
	unsettled bool
}

// newApplyBatch starts applying the decisions on the memories of window w
// of a session, extracted by extractor, at now.
func newApplyBatch(scope imprint.Scope, sessionID, extractor string, now time.Time, w Window) *applyBatch {
	b := &applyBatch{
		scope: scope, sessionID: sessionID, extractor: extractor, now: imprint.At(now),
		msgTimes: make(map[string]imprint.Time, len(w.New)), replacedBy: map[string]string{}, written: map[string]imprint.Memory{},
	}
	for _, m := range w.New {
		b.msgTimes[m.ID] = messageTime(m)
	}
	return b
}

// applyStep is one planned memory change of a window: the memory to
// write, the live targets it supersedes, the action counted and its shard
// lines.
type applyStep struct {
	m       imprint.Memory
	targets []imprint.Memory
	action  string
	lines   []any
	// orig and d are what the step was planned from, to plan it again.
	orig imprint.Memory
	d    decision
}

// apply writes the decisions of a batch. It plans every change of the
// window first (reading, never writing, the store), appends all their
// shard lines with one write and one sync per day file, and only then
// applies each memory in its own store transaction, in order: the records
// shards are a write-ahead log, so a window that stops between the two is
// in the log, and when it runs again (its messages are still pending) it
// writes the same memories under the same ids (ids are derived from the
// window; see assignIDs), which a replay reads as one. Only a store
// failure is an error.
func (r *Runner) apply(ctx context.Context, b *applyBatch, mems []imprint.Memory, out dedupOutcome, res *Result) error {
	steps, err := r.planAll(ctx, b, mems, out, res)
	if err != nil {
		return err
	}
	var lines []any
	for _, s := range steps {
		lines = append(lines, s.lines...)
	}
	if len(steps) > 0 {
		// The ids first, durably, so that a crash before the store writes
		// are done is settled later (inflight.go).
		m, err := r.beginInflight(sessionKey(b.scope, b.sessionID), b.now, []inflightEntry{stepEntry(b, steps)})
		if err != nil {
			res.warn("records", "inflight_marker_failed", err.Error())
		}
		b.marker = m
	}
	r.appendRecords(b, lines, res)
	return r.applySteps(ctx, b, steps, res)
}

// planAll plans the changes of a window's decisions (skips are counted).
func (r *Runner) planAll(ctx context.Context, b *applyBatch, mems []imprint.Memory, out dedupOutcome, res *Result) ([]applyStep, error) {
	var steps []applyStep
	for i, m := range mems {
		d := out.decisions[i]
		if d.action == ActionSkip {
			res.Decisions.add(ActionSkip)
			continue
		}
		var targets []imprint.Memory
		if d.action == ActionUpdate || d.action == ActionMerge {
			var err error
			targets, err = r.liveTargets(ctx, b, d.targets, out.candidates)
			if err != nil {
				return nil, err
			}
		}
		steps = append(steps, r.plan(ctx, b, m, d, targets, res))
	}
	return steps, nil
}

// applySteps writes planned changes whose lines are logged, each memory in
// its own store transaction, in order.
func (r *Runner) applySteps(ctx context.Context, b *applyBatch, steps []applyStep, res *Result) error {
	for i, s := range steps {
		err := r.d.Store.PutMemory(ctx, s.m, s.m.Supersedes)
		if errors.Is(err, imprint.ErrConflict) && len(s.targets) > 0 {
			// A target was superseded meanwhile by another writer: plan
			// again against what is still live, log that (the later line
			// of an id is the one a replay keeps) and write it.
			var targets []imprint.Memory
			if targets, err = r.storeLive(ctx, b, s.targets); err == nil {
				s = r.plan(ctx, b, s.orig, s.d, targets, res)
				r.appendRecords(b, s.lines, res)
				err = r.d.Store.PutMemory(ctx, s.m, s.m.Supersedes)
			}
		}
		if err != nil {
			r.withdraw(b, steps[i:], res)
			return fmt.Errorf("write memory: %w", err)
		}
		s.stored(res)
	}
	return nil
}

// stored counts a step whose memory is written into res.
func (s applyStep) stored(res *Result) {
	res.Decisions.add(s.action)
	res.Records = append(res.Records, s.m)
	res.StoredCount++
}

// putTogether writes the memories of the steps of ws, in order, in one
// store transaction when the store can (imprint.MemoryBatchWriter) and
// they are more than one, and reports whether it did; after false nothing
// of them is written, and each window is applied on its own (applySteps),
// which deals with conflicts and failures one memory at a time.
func (r *Runner) putTogether(ctx context.Context, ws []*plannedWindow) bool {
	bw, ok := imprint.AsMemoryBatchWriter(r.d.Store)
	if !ok {
		return false
	}
	var puts []imprint.MemoryPut
	for _, pw := range ws {
		for _, s := range pw.steps {
			puts = append(puts, imprint.MemoryPut{Memory: s.m, Supersede: s.m.Supersedes})
		}
	}
	if len(puts) < 2 {
		return false
	}
	if err := bw.PutMemories(ctx, puts); err != nil {
		r.log().Debug("memories of planned windows written one by one", "error", err)
		return false
	}
	return true
}

// appendRecords appends lines to the records shards and reports whether
// they were written; a failure is a warning (the store stays the source of
// truth, as it was before the log existed).
func (r *Runner) appendRecords(b *applyBatch, lines []any, res *Result) bool {
	if r.d.Records == nil || len(lines) == 0 {
		return true
	}
	if err := r.d.Records.Append(lines, func(int) time.Time { return b.now.Time }); err != nil {
		res.warn("records", "shard_write_failed", err.Error())
		return false
	}
	return true
}

// withdraw logs that the planned steps were not applied, so that a replay
// does not apply them either; b is marked unsettled when it cannot.
func (r *Runner) withdraw(b *applyBatch, steps []applyStep, res *Result) {
	var lines []any
	for _, s := range steps {
		lines = append(lines, RecordLine{Op: OpLineWithdraw, At: b.now, Memory: s.m})
	}
	if !r.appendRecords(b, lines, res) {
		b.unsettled = true
	}
}

// storeLive returns the targets that are still live in the store,
// dropping the in-batch replacement recorded for the others.
func (r *Runner) storeLive(ctx context.Context, b *applyBatch, targets []imprint.Memory) ([]imprint.Memory, error) {
	var out []imprint.Memory
	for _, t := range targets {
		m, err := r.d.Store.GetMemory(ctx, b.scope, t.ID)
		if errors.Is(err, imprint.ErrNotFound) {
			delete(b.replacedBy, t.ID)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("load target memory: %w", err)
		}
		if m.SupersededBy != nil {
			delete(b.replacedBy, t.ID)
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// liveTargets resolves target ids to the live memories they now are,
// following replacements made earlier in the batch.
func (r *Runner) liveTargets(ctx context.Context, b *applyBatch, targetIDs []string, cache map[string]imprint.Memory) ([]imprint.Memory, error) {
	var out []imprint.Memory
	seen := map[string]bool{}
	for _, id := range targetIDs {
		for n := 0; b.replacedBy[id] != "" && n < 64; n++ {
			id = b.replacedBy[id]
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		m, ok := b.written[id]
		if !ok {
			m, ok = cache[id]
		}
		if !ok {
			var err error
			m, err = r.d.Store.GetMemory(ctx, b.scope, id)
			if errors.Is(err, imprint.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("load target memory: %w", err)
			}
		}
		if m.SupersededBy == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// plan works out the memory to write for one decision and its shard
// lines, and notes in b what it replaces; it writes nothing.
func (r *Runner) plan(ctx context.Context, b *applyBatch, m imprint.Memory, d decision, targets []imprint.Memory, res *Result) applyStep {
	orig, origD := m, d
	action := d.action
	if action == ActionMerge && d.mergedContent == "" {
		action = ActionUpdate
	}
	if len(targets) == 0 {
		action = ActionStore
	}
	if action != ActionStore {
		if harm := d.harm(m); harm != promptguard.HarmNone {
			// The judge's version would be an unsafe instruction: the new
			// memory, already found safe, is stored as it is instead.
			r.noteUnsafe(ctx, b.scope, b.sessionID, m.SourceMessageIDs, harm, res)
			action, targets = ActionStore, nil
		}
	}
	m.Scope = b.scope
	m.SessionID = b.sessionID
	m.Extractor = b.extractor
	m.CreatedAt, m.UpdatedAt = b.now, b.now
	m.SupersededBy = nil
	m.Supersedes = []string{}
	m.Version = 1
	m.Timestamps = b.sourceTimes(m.SourceMessageIDs, nil)

	if action != ActionStore {
		if d.mergedContent != "" && d.mergedContent != m.Content {
			m.Content = d.mergedContent
			m.ContentHash = ContentHash(m.Content)
			m.Vec, m.Embedder = r.embedOne(ctx, m.Content, res)
		}
		if d.mergedType != "" {
			m.Type = d.mergedType
		}
		m.Priority = mergedPriority(m.Type, d.mergedPriority, m.Priority)
		var sources []string
		var stamps []imprint.Time
		for _, t := range targets {
			if t.Workspace == "" {
				// A correction of a memory of every workspace (persona,
				// global instruction) holds for every workspace too.
				m.Workspace = ""
			}
			sources = append(sources, t.SourceMessageIDs...)
			stamps = append(stamps, t.Timestamps...)
			m.Supersedes = append(m.Supersedes, t.ID)
			m.Version = max(m.Version, t.Version+1)
			if !t.CreatedAt.IsZero() && t.CreatedAt.Before(m.CreatedAt.Time) {
				m.CreatedAt = t.CreatedAt
			}
			if m.Metadata.ActivityStartTime == "" {
				m.Metadata.ActivityStartTime = t.Metadata.ActivityStartTime
			}
			if m.Metadata.ActivityEndTime == "" {
				m.Metadata.ActivityEndTime = t.Metadata.ActivityEndTime
			}
		}
		m.SourceMessageIDs = unionStrings(sources, m.SourceMessageIDs)
		m.Timestamps = b.sourceTimes(m.SourceMessageIDs, stamps)
	}

	lines := []any{RecordLine{Op: action, At: b.now, Memory: m}}
	for _, t := range targets {
		if action == ActionStore {
			break
		}
		t.SupersededBy = &m.ID
		lines = append(lines, RecordLine{Op: OpLineSupersede, At: b.now, Memory: t})
		b.replacedBy[t.ID] = m.ID
		b.written[t.ID] = t
	}
	b.written[m.ID] = m
	return applyStep{m: m, targets: targets, action: action, lines: lines, orig: orig, d: origD}
}

// harm is the harm asked by the memory the judge's decision d makes of
// m: its merged content and type where given, else m's.
func (d decision) harm(m imprint.Memory) promptguard.Harm {
	content, t := m.Content, m.Type
	if d.mergedContent != "" {
		content = d.mergedContent
	}
	if d.mergedType != "" {
		t = d.mergedType
	}
	return unsafeInstruction(t, content)
}

// sourceTimes returns the sorted, unique times of the given source
// messages: those of the window known from msgTimes, plus extra (the
// times of replaced memories, themselves taken from their sources).
func (b *applyBatch) sourceTimes(sources []string, extra []imprint.Time) []imprint.Time {
	var ts []imprint.Time
	for _, id := range sources {
		if t, ok := b.msgTimes[id]; ok && !t.IsZero() {
			ts = append(ts, t)
		}
	}
	for _, t := range extra {
		if !t.IsZero() {
			ts = append(ts, imprint.At(t.Time))
		}
	}
	slices.SortFunc(ts, func(a, c imprint.Time) int { return a.Compare(c.Time) })
	ts = slices.CompactFunc(ts, func(a, c imprint.Time) bool { return a.Equal(c.Time) })
	if ts == nil {
		ts = []imprint.Time{}
	}
	return ts
}

// mergedPriority is the judge's priority when valid for t, else the new
// memory's, adjusted to t's rules.
func mergedPriority(t imprint.MemoryType, merged *int, own int) int {
	if merged != nil {
		if p, ok := normalizePriority(t, *merged); ok {
			return p
		}
	}
	if p, ok := normalizePriority(t, own); ok {
		return p
	}
	return t.PriorityFloor()
}

// embedOne embeds one text; a failure is a warning and no vector.
func (r *Runner) embedOne(ctx context.Context, text string, res *Result) ([]float32, string) {
	if r.d.Embedder == nil {
		return nil, ""
	}
	vecs, err := r.d.Embedder.Embed(ctx, []string{text})
	if err != nil || len(vecs) != 1 {
		if err == nil {
			err = fmt.Errorf("embedder returned %d vectors for 1 text", len(vecs))
		}
		res.warn("embed", imprint.ErrorCode(err), fmt.Sprintf("memory stored without a vector: %v", err))
		return nil, ""
	}
	return vecs[0], r.d.Embedder.Name()
}

func unionStrings(lists ...[]string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, l := range lists {
		for _, s := range l {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// ReplayStats counts what Replay did.
type ReplayStats struct {
	// Lines is the number of shard lines read.
	Lines int `json:"lines"`
	// Written is the number of memories written to the store.
	Written int `json:"written"`
	// Existing is the number of memories skipped because the store had them.
	Existing int `json:"existing"`
}

// ReplayWith rebuilds memories in store from the records log (the day
// files of <data_dir>/records, e.g. shard.Dir), oldest file first, so that
// the live set matches the one that wrote the shards, embedding each
// memory with emb (nil: memories get no vector). Memories the store
// already has are left alone, so a replay can be repeated. A line that is
// not a record line is an error of kind ErrInvalid naming the file and
// line.
//
// A memory whose last line is a forget line (imprint.OpLineForget) is
// replayed retired; a purged memory has no line left to replay.
//
// A memory written more than once in the log (a window planned again after
// a conflict, or redone after it stopped between its log and its store
// transactions) is replayed from its last line only, and not at all when
// that line withdraws it (its store write failed).
func ReplayWith(ctx context.Context, store imprint.MemoryStore, log imprint.LogReader, emb imprint.Embedder) (ReplayStats, error) {
	// First pass: the line number of each memory's last write.
	last := map[string]int{}
	n := 0
	err := log.Read(func(line []byte) error {
		n++
		var l struct {
			Op     string `json:"op"`
			Memory struct {
				ID string `json:"id"`
			} `json:"memory"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			return imprint.Invalidf("record line: %v", err)
		}
		switch l.Op {
		case OpLineStore, OpLineUpdate, OpLineMerge, OpLineWithdraw, imprint.OpLineForget:
			last[l.Memory.ID] = n
		case OpLineSupersede:
		default:
			return imprint.Invalidf("record line: unknown op %q", l.Op)
		}
		return nil
	})
	if err != nil {
		return ReplayStats{}, err
	}
	var st ReplayStats
	err = log.Read(func(line []byte) error {
		st.Lines++
		var l RecordLine
		if err := json.Unmarshal(line, &l); err != nil {
			return imprint.Invalidf("record line: %v", err)
		}
		switch l.Op {
		case OpLineStore, OpLineUpdate, OpLineMerge:
		case imprint.OpLineForget:
			// Forgotten by hand: the memory is replayed, retired.
			if l.Memory.ForgottenAt == nil {
				at := l.At
				l.Memory.ForgottenAt = &at
			}
		case OpLineSupersede, OpLineWithdraw:
			return nil // done by the update or merge line before it; nothing to do
		default:
			return imprint.Invalidf("record line: unknown op %q", l.Op)
		}
		m := l.Memory
		if last[m.ID] != st.Lines {
			return nil // written again further on
		}
		if _, err := store.GetMemory(ctx, m.Scope, m.ID); err == nil {
			st.Existing++
			return nil
		} else if !errors.Is(err, imprint.ErrNotFound) {
			return fmt.Errorf("replay: %w", err)
		}
		var targets []string
		for _, id := range m.Supersedes {
			t, err := store.GetMemory(ctx, m.Scope, id)
			if err == nil && t.SupersededBy == nil {
				targets = append(targets, id)
			}
		}
		m.SupersededBy = nil
		m.ContentHash = ContentHash(m.Content)
		m.Vec, m.Embedder = nil, ""
		if emb != nil {
			vecs, err := emb.Embed(ctx, []string{m.Content})
			if err != nil {
				return fmt.Errorf("replay: embed memory %s: %w", m.ID, err)
			}
			if len(vecs) == 1 {
				m.Vec, m.Embedder = vecs[0], emb.Name()
			}
		}
		if err := store.PutMemory(ctx, m, targets); err != nil {
			return fmt.Errorf("replay memory %s: %w", m.ID, err)
		}
		st.Written++
		return nil
	})
	return st, err
}
