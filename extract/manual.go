package extract

import (
	"context"
	"errors"
	"fmt"
	"slices"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/extract/heuristic"
	"github.com/imprint-dev/imprint/promptguard"
)

// Memories added and corrected by hand (package curate) go through the same
// dedup and write path as extracted ones: the exact-text pre-check, the
// recall and the judge decide, plan writes the version and its records-log
// lines, and the store write follows the log.

// TypeOf returns the type of a memory added by hand without one: with a
// model, the type of the first memory the extraction prompt (OpExtract)
// finds in content said by the user; without one, or when the call fails
// or finds none, InferType's.
func (r *Runner) TypeOf(ctx context.Context, scope imprint.Scope, content string) imprint.MemoryType {
	if r.d.LLM != nil {
		msg := imprint.Message{ID: "m1", Role: imprint.RoleUser, Content: content, Timestamp: imprint.At(r.now())}
		cands, _, _, _, err := r.callExtract(ctx, scope, sessionState{known: true}, Window{New: []imprint.Message{msg}})
		if err != nil {
			r.log().Warn("type of a memory added by hand: the model call failed; using the heuristic rules", "error", err.Error())
		}
		for _, c := range cands {
			if c.Type.Valid() {
				return c.Type
			}
		}
	}
	return InferType(content)
}

// InferType returns the type the heuristic rules give content (the first
// memory they would extract from it, said by the user), else episodic.
func InferType(content string) imprint.MemoryType {
	cands := heuristic.Extract([]imprint.Message{{ID: "manual", Role: imprint.RoleUser, Content: content}})
	for _, c := range cands {
		if c.Type.Valid() {
			return c.Type
		}
	}
	return imprint.MemoryEpisodic
}

// Remember deduplicates m, a memory added by hand (Content, Type and
// Priority set; SessionID optional; no id needed), against the scope's
// live memories as an extracted memory is, and writes it with Extractor
// imprint.ExtractorManual: its records-log lines first, then the store. It
// returns the memory that holds the fact (the live duplicate for
// imprint.RememberDuplicate) and the action taken (imprint.Remember*).
// ErrInvalid for an instruction that asks for harm (nothing is written);
// a refused judge call (LLM budget) and store failures are returned.
func (r *Runner) Remember(ctx context.Context, scope imprint.Scope, m imprint.Memory) (imprint.Memory, string, error) {
	if harm := unsafeInstruction(m.Type, m.Content); harm != promptguard.HarmNone {
		return imprint.Memory{}, "", imprint.Invalidf("instruction not kept: it asks to %s", harmText(harm))
	}
	res := newManualResult()
	if m.ID == "" {
		m.ID = imprint.NewID()
	}
	m.Scope = scope
	m.ContentHash = ContentHash(m.Content)
	m.Vec, m.Embedder = r.embedOne(ctx, m.Content, &res)
	out := r.dedup(ctx, scope, []imprint.Memory{m})
	if out.refused != nil {
		return imprint.Memory{}, "", fmt.Errorf("dedup: %w", out.refused)
	}
	d := out.decisions[0]
	if d.action == ActionSkip {
		dup, err := r.duplicateOf(ctx, scope, m, d, out)
		if err != nil {
			return imprint.Memory{}, "", err
		}
		return dup, imprint.RememberDuplicate, nil
	}
	b := newApplyBatch(scope, m.SessionID, imprint.ExtractorManual, r.now(), Window{})
	var targets []imprint.Memory
	if d.action == ActionUpdate || d.action == ActionMerge {
		var err error
		if targets, err = r.liveTargets(ctx, b, d.targets, out.candidates); err != nil {
			return imprint.Memory{}, "", err
		}
	}
	step := r.plan(ctx, b, m, d, targets, &res)
	if err := r.writeManual(ctx, b, step, &res); err != nil {
		return imprint.Memory{}, "", err
	}
	return step.m, step.action, nil
}

// Revise writes a new version of the live memory old with content (and
// typ when set), superseding it, with Extractor imprint.ExtractorManual;
// sources, session and creation time are old's. ErrInvalid for an
// instruction that asks for harm; ErrConflict when old is no longer live
// (superseded meanwhile).
func (r *Runner) Revise(ctx context.Context, old imprint.Memory, content string, typ imprint.MemoryType) (imprint.Memory, error) {
	if typ == "" {
		typ = old.Type
	}
	if harm := unsafeInstruction(typ, content); harm != promptguard.HarmNone {
		return imprint.Memory{}, imprint.Invalidf("instruction not kept: it asks to %s", harmText(harm))
	}
	res := newManualResult()
	m := old
	m.ID = imprint.NewID()
	m.Content, m.Type = content, typ
	m.SourceMessageIDs = nil
	m.ForgottenAt = nil
	m.ContentHash = ContentHash(content)
	m.Vec, m.Embedder = r.embedOne(ctx, content, &res)
	b := newApplyBatch(old.Scope, old.SessionID, imprint.ExtractorManual, r.now(), Window{})
	step := r.plan(ctx, b, m, decision{action: ActionUpdate, targets: []string{old.ID}, mergedPriority: &old.Priority}, []imprint.Memory{old}, &res)
	if err := r.writeManual(ctx, b, step, &res); err != nil {
		return imprint.Memory{}, err
	}
	return step.m, nil
}

// writeManual logs a planned change and writes it; when the store write
// fails the change is withdrawn in the log. A failed log write is logged
// (the store stays the source of truth, as for a window).
func (r *Runner) writeManual(ctx context.Context, b *applyBatch, s applyStep, res *Result) error {
	r.appendRecords(b, s.lines, res)
	if err := r.d.Store.PutMemory(ctx, s.m, s.m.Supersedes); err != nil {
		r.withdraw(b, []applyStep{s}, res)
		if errors.Is(err, imprint.ErrConflict) {
			return fmt.Errorf("write memory: %w (it changed meanwhile; try again)", err)
		}
		return fmt.Errorf("write memory: %w", err)
	}
	for _, w := range res.Warnings {
		r.log().Warn("manual memory", "stage", w.Stage, "code", w.Code, "message", w.Message)
	}
	return nil
}

// duplicateOf returns the live memory a skipped m repeats: the one with
// its text that m's workspace sees (its own workspace first, else one
// shared by every workspace), else the judge's first target or candidate.
// A copy in another workspace is never named.
func (r *Runner) duplicateOf(ctx context.Context, scope imprint.Scope, m imprint.Memory, d decision, out dedupOutcome) (imprint.Memory, error) {
	same, err := r.d.Store.FindMemoryByHash(ctx, scope, m.ContentHash)
	if err != nil {
		return imprint.Memory{}, fmt.Errorf("find duplicate: %w", err)
	}
	var shared *imprint.Memory
	for i, c := range same {
		if c.Workspace == m.Workspace {
			return c, nil
		}
		if c.Workspace == "" && shared == nil {
			shared = &same[i]
		}
	}
	if shared != nil {
		return *shared, nil
	}
	for _, id := range d.targets {
		if c, ok := out.candidates[id]; ok {
			return c, nil
		}
	}
	ids := make([]string, 0, len(out.candidates))
	for id := range out.candidates {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) > 0 {
		return out.candidates[ids[0]], nil
	}
	return m, nil
}

func newManualResult() Result {
	return Result{Warnings: []Warning{}}
}
