package extract

import (
	"context"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

// decision is what happens to one new memory.
type decision struct {
	action string
	// targets are the candidate ids an update or merge replaces.
	targets        []string
	mergedContent  string
	mergedType     imprint.MemoryType
	mergedPriority *int
}

// dedupOutcome is the dedup stage's verdict on a batch.
type dedupOutcome struct {
	// decisions is parallel to the batch.
	decisions []decision
	// candidates are the stored memories recalled, by id.
	candidates  map[string]imprint.Memory
	tier        string
	judgeCalled bool
	warnings    []Warning
	// refused is the judge call's error when an LLM budget refused it.
	refused error
}

func (o *dedupOutcome) warn(stage, code, msg string) {
	o.warnings = append(o.warnings, Warning{Stage: stage, Code: code, Message: msg})
}

// dedup decides store/update/merge/skip for each memory of a batch (which
// carry ids, content hashes and, when embedded, vectors). Everything is
// scoped by tenant/user/agent, never by session. With dedup disabled all
// are stored; without an LLM only the exact-text pre-check runs.
func (r *Runner) dedup(ctx context.Context, scope imprint.Scope, mems []imprint.Memory) dedupOutcome {
	return r.dedupOver(ctx, scope, mems, nil, nil)
}

// dedupOver is dedup for a window planned after others whose memories are
// not in the store yet: planned holds the content hashes those windows
// store, with their memories' workspaces, which the pre-check counts as
// stored live.
//
// live, when not nil, holds every hash of mems that a live memory of the
// scope had when it was made, with those memories' workspaces
// (liveHashes): the store is not asked.
func (r *Runner) dedupOver(ctx context.Context, scope imprint.Scope, mems []imprint.Memory, planned, live map[string][]string) dedupOutcome {
	out := dedupOutcome{decisions: make([]decision, len(mems)), candidates: map[string]imprint.Memory{}, tier: tierNone}
	for i := range out.decisions {
		out.decisions[i].action = ActionStore
	}
	if !r.cfg.EnableDedup || len(mems) == 0 {
		return out
	}

	// Deterministic pre-check: the same normalized text is already stored
	// live in the scope, or earlier in this batch.
	// seen holds the hashes of the memories before in mems, with their
	// workspaces: a duplicate is decided within a workspace (and against
	// workspace-less memories), as the store decides it.
	seen := map[string][]string{}
	for i, m := range mems {
		h := m.ContentHash
		if sameWorkspace(seen[h], m.Workspace) || sameWorkspace(planned[h], m.Workspace) {
			out.decisions[i].action = ActionSkip
			continue
		}
		seen[h] = append(seen[h], m.Workspace)
		if live != nil {
			if sameWorkspace(live[h], m.Workspace) {
				out.decisions[i].action = ActionSkip
			}
			continue
		}
		stored, err := r.hasLiveHash(ctx, scope, m.Workspace, h)
		if err != nil {
			out.warn("dedup", imprint.ErrorCode(err), fmt.Sprintf("exact-text lookup: %v", err))
			continue
		}
		if stored {
			out.decisions[i].action = ActionSkip
		}
	}
	if r.d.LLM == nil {
		return out
	}

	var rest []int
	batchIDs := make([]string, len(mems))
	for i, m := range mems {
		batchIDs[i] = m.ID
		if out.decisions[i].action != ActionSkip {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return out
	}
	cands := r.recall(ctx, scope, mems, rest, batchIDs, &out)
	var judged []int
	for _, i := range rest {
		if len(cands[i]) > 0 {
			judged = append(judged, i)
		}
	}
	if len(judged) == 0 {
		return out // nothing related is stored: no judge call
	}
	r.judge(ctx, scope, mems, judged, cands, &out)
	return out
}

// liveHashes returns, when the store lists live hashes in one query
// (imprint.LiveHashLister), those of the memories of ws that a live memory
// of the scope has, each with the workspaces of those memories; nil when
// it cannot (dedupOver then asks hash by hash).
func (r *Runner) liveHashes(ctx context.Context, scope imprint.Scope, ws []*plannedWindow, failed map[string]bool) map[string][]string {
	hl, ok := imprint.AsLiveHashLister(r.d.Store)
	if !ok || !r.cfg.EnableDedup {
		return nil
	}
	var hashes []string
	seen := map[string]bool{}
	for _, pw := range ws {
		if pw.single || failed[pw.sessionID] {
			continue
		}
		for _, m := range pw.mems {
			if h := m.ContentHash; h != "" && !seen[h] {
				seen[h] = true
				hashes = append(hashes, h)
			}
		}
	}
	if len(hashes) == 0 {
		return nil
	}
	live, err := hl.LiveMemoryHashes(ctx, scope, hashes)
	if err != nil || live == nil {
		return nil // asked hash by hash, which reports the failure
	}
	return live
}

// hasLiveHash reports whether a live memory of the scope has the hash, in
// workspace ws or in none: a memory of another workspace is no duplicate.
func (r *Runner) hasLiveHash(ctx context.Context, scope imprint.Scope, ws, h string) (bool, error) {
	live, err := r.d.Store.HasLiveMemoryHash(ctx, scope, h)
	if err != nil || !live {
		return false, err
	}
	same, err := r.d.Store.FindMemoryByHash(ctx, scope, h)
	if err != nil {
		return false, err
	}
	wss := make([]string, len(same))
	for i, m := range same {
		wss[i] = m.Workspace
	}
	return sameWorkspace(wss, ws), nil
}

// sameWorkspace reports whether a memory of one of the workspaces stored
// is a duplicate of a memory of workspace ws: it is of ws, or of none.
func sameWorkspace(stored []string, ws string) bool {
	return contains(stored, ws) || contains(stored, "")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
