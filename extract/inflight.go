package extract

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// In-flight markers close the gap between the records log and the store.
// A window's lines are logged before its memories are stored; if the
// process dies in between, the window is redone, and with an LLM the redo
// can give other memories, so the first attempt's lines would stay in the
// log for memories no store holds. So before a window's (or a heuristic
// batch's) lines are logged, the ids of the memories it is about to write
// are written, durably, to a small marker in the records log's journal
// (<records>/inflight/), removed once its store writes are done. A marker
// still there when a window of one of its sessions runs again means the
// process stopped part-way: each listed memory the store does not hold
// gets a withdraw line (so ReplayWith drops it) and the marker goes.
//
// A listed memory the store holds is kept as logged: its id is derived
// from its window, sources, type and content (assignIDs), and its store
// transaction wrote the memory of its logged line, so the two agree.

// batchMarkerPrefix starts the names of the markers of heuristic batches
// (which may list many sessions); a window's marker name starts with its
// session's key.
const batchMarkerPrefix = "batch"

// inflightEntry lists the memories a window (or the windows of one session
// in a batch) is about to write.
type inflightEntry struct {
	Scope     imprint.Scope `json:"scope"`
	SessionID string        `json:"session_id"`
	IDs       []string      `json:"ids"`
}

// inflightFile is the content of a marker.
type inflightFile struct {
	// At is the time the window's lines are logged at (their day file);
	// withdraw lines are logged no earlier, so that they follow them.
	At      imprint.Time    `json:"at"`
	Entries []inflightEntry `json:"entries"`
}

// inflightMarker is a marker this process wrote; it is live (never
// recovered in this process) until ended.
type inflightMarker struct {
	e imprint.JournalEntry
}

// sessionKey names a session in marker file names: 32 hex digits of a
// hash of its scope and id, so any scope or session id gives a safe name.
func sessionKey(scope imprint.Scope, sessionID string) string {
	sum := sha256.Sum256(imprint.AppendKeyParts(nil, 0, scope.Tenant, scope.User, scope.Agent, "", sessionID)) // "": the workspace slot of earlier versions
	return hex.EncodeToString(sum[:16])
}

// beginInflight durably writes a marker listing entries, whose lines are
// logged at at, named <prefix>-<random>.json in the records log's journal.
// Without a records log or ids it writes nothing and returns nil.
func (r *Runner) beginInflight(prefix string, at imprint.Time, entries []inflightEntry) (*inflightMarker, error) {
	if r.d.Records == nil || len(entries) == 0 {
		return nil, nil
	}
	data, err := json.Marshal(inflightFile{At: at, Entries: entries})
	if err != nil {
		return nil, fmt.Errorf("encode inflight marker: %w", err)
	}
	e, err := r.d.Records.Journal().Begin(prefix, data)
	if err != nil {
		return nil, fmt.Errorf("inflight marker: %w", err)
	}
	return &inflightMarker{e: e}, nil
}

// endInflight ends a marker of this process: it is removed when remove is
// set (everything it lists is stored or withdrawn), else left for the
// next window of one of its sessions to recover. The removal needs no
// sync: a marker that comes back after a crash lists stored memories
// only, and its recovery withdraws nothing.
func (r *Runner) endInflight(m *inflightMarker, remove bool) {
	if m == nil {
		return
	}
	if err := r.d.Records.Journal().End(m.e, remove); err != nil {
		r.log().Warn("remove inflight marker", "path", m.e.ID, "error", err)
	}
}

// stepEntry lists the memories of a window's planned steps.
func stepEntry(b *applyBatch, steps []applyStep) inflightEntry {
	e := inflightEntry{Scope: b.scope, SessionID: b.sessionID, IDs: make([]string, len(steps))}
	for i, s := range steps {
		e.IDs[i] = s.m.ID
	}
	return e
}

// recoverInflight recovers the markers left by a process that stopped
// while writing windows of the sessions whose keys are in keys: the
// listed memories the store does not hold are withdrawn in the log. The
// entries of other sessions in a batch marker are left in a marker of
// their own, for their sessions' next windows (whose work the caller does
// not serialize with).
func (r *Runner) recoverInflight(ctx context.Context, keys map[string]bool) error {
	if r.d.Records == nil || len(keys) == 0 {
		return nil
	}
	return r.d.Records.Journal().Recover(func(prefix string) bool {
		return prefix == batchMarkerPrefix || keys[prefix]
	}, func(e imprint.JournalEntry) (bool, error) {
		return r.recoverMarker(ctx, e, keys)
	})
}

// recoverMarker recovers the entries of one marker for the sessions in
// keys and reports whether the marker is done with.
func (r *Runner) recoverMarker(ctx context.Context, mk imprint.JournalEntry, keys map[string]bool) (bool, error) {
	var f inflightFile
	if err := json.Unmarshal(mk.Data, &f); err != nil {
		// Written in part: the process stopped while writing it, before
		// any line of its windows was logged.
		r.log().Warn("remove incomplete inflight marker", "path", mk.ID, "error", err)
		return true, nil
	}
	var mine, rest []inflightEntry
	for _, e := range f.Entries {
		if keys[sessionKey(e.Scope, e.SessionID)] {
			mine = append(mine, e)
		} else {
			rest = append(rest, e)
		}
	}
	if len(mine) == 0 {
		return false, nil
	}
	now := imprint.At(r.now())
	if now.Before(f.At.Time) {
		now = f.At
	}
	var lines []any
	for _, e := range mine {
		for _, id := range e.IDs {
			_, err := r.d.Store.GetMemory(ctx, e.Scope, id)
			if err == nil {
				continue
			}
			if !errors.Is(err, imprint.ErrNotFound) {
				return false, fmt.Errorf("read memory %s: %w", id, err)
			}
			lines = append(lines, RecordLine{Op: OpLineWithdraw, At: now,
				Memory: imprint.Memory{ID: id, Scope: e.Scope, SessionID: e.SessionID}})
		}
	}
	if len(lines) > 0 {
		if err := r.d.Records.Append(lines, func(int) time.Time { return now.Time }); err != nil {
			return false, err
		}
		r.log().Warn("withdrew memories of an interrupted window", "count", len(lines), "marker", filepath.Base(mk.ID))
	}
	if len(rest) > 0 {
		m, err := r.beginInflight(batchMarkerPrefix, f.At, rest)
		if err != nil {
			return false, err
		}
		// Left for the other sessions' next windows.
		r.endInflight(m, false)
	}
	return true, nil
}
