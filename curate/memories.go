package curate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/extract"
)

// Deps are what a Manager works with.
type Deps struct {
	// Store is required.
	Store imprint.Store
	// Extract is the extraction runner whose dedup and write path a
	// remember and an edit take (built on the same Store and Records);
	// required.
	Extract *extract.Runner
	// Records is the records log (<data_dir>/records): forget lines are
	// appended to it, and a purge rewrites it when it is an
	// imprint.LogRewriter. Nil logs nothing.
	Records imprint.RecordLog
	// Conversations is the L0 log (<data_dir>/conversations), rewritten
	// by a purge with sources when it is an imprint.LogRewriter.
	Conversations imprint.RecordLog
	// Redact replaces secrets in a text (redact.String in the binary); nil
	// keeps texts as given.
	Redact func(string) string
	Logger *slog.Logger
}

// Manager implements imprint.Memories.
type Manager struct {
	d   Deps
	now func() time.Time
}

var _ imprint.Memories = (*Manager)(nil)

// New returns a Manager.
func New(d Deps) *Manager {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Manager{d: d, now: time.Now}
}

// manualPriority is the priority of a memory added by hand without one:
// twenty above its type's floor (persona 70, episodic 80, instruction 90),
// as something the user said on purpose.
func manualPriority(t imprint.MemoryType) int { return t.PriorityFloor() + 20 }

// text cleans and redacts a text given by hand; ErrInvalid when nothing is
// left.
func (m *Manager) text(field, s string) (string, error) {
	s = strings.TrimSpace(imprint.CleanText(s))
	if m.d.Redact != nil {
		s = m.d.Redact(s)
	}
	if s == "" {
		return "", imprint.Invalidf("%s is empty", field)
	}
	return s, nil
}

func parseType(t imprint.MemoryType) (imprint.MemoryType, error) {
	t = imprint.MemoryType(strings.ToLower(strings.TrimSpace(string(t))))
	if t != "" && !t.Valid() {
		return "", imprint.Invalidf("type must be persona, episodic or instruction, got %q", t)
	}
	return t, nil
}

// Remember adds a memory by hand; see imprint.Memories.
func (m *Manager) Remember(ctx context.Context, r imprint.RememberRequest) (imprint.RememberResult, error) {
	if err := r.Scope.Validate(); err != nil {
		return imprint.RememberResult{}, err
	}
	content, err := m.text("content", r.Content)
	if err != nil {
		return imprint.RememberResult{}, err
	}
	typ, err := parseType(r.Type)
	if err != nil {
		return imprint.RememberResult{}, err
	}
	if r.SessionID != "" {
		if err := imprint.ValidateID("session_id", r.SessionID); err != nil {
			return imprint.RememberResult{}, err
		}
	}
	if err := imprint.ValidateWorkspace("workspace", r.Workspace); err != nil {
		return imprint.RememberResult{}, err
	}
	if typ == "" {
		typ = m.d.Extract.TypeOf(ctx, r.Scope, content)
	}
	prio := manualPriority(typ)
	if r.Priority != nil {
		prio = *r.Priority
	}
	mem := imprint.Memory{
		Content: content, Type: typ, Priority: prio, SessionID: r.SessionID, Workspace: r.Workspace,
		SourceMessageIDs: []string{}, Timestamps: []imprint.Time{}, Supersedes: []string{},
	}
	got, action, err := m.d.Extract.Remember(ctx, r.Scope, mem)
	if err != nil {
		return imprint.RememberResult{}, fmt.Errorf("remember: %w", err)
	}
	return imprint.RememberResult{Memory: got, Action: action}, nil
}

// Show returns a memory with its history and sources; see imprint.Memories.
func (m *Manager) Show(ctx context.Context, scope imprint.Scope, id string) (imprint.MemoryDetail, error) {
	mem, err := m.d.Store.GetMemory(ctx, scope, id)
	if err != nil {
		return imprint.MemoryDetail{}, err
	}
	hist, err := m.d.Store.MemoryHistory(ctx, scope, id)
	if err != nil {
		return imprint.MemoryDetail{}, err
	}
	det := imprint.MemoryDetail{Memory: mem, History: hist, Sources: []imprint.Message{}}
	if det.History == nil {
		det.History = []imprint.Memory{}
	}
	for _, sid := range mem.SourceMessageIDs {
		msg, err := m.d.Store.GetMessage(ctx, scope, mem.SessionID, sid)
		if errors.Is(err, imprint.ErrNotFound) {
			continue
		}
		if err != nil {
			return imprint.MemoryDetail{}, fmt.Errorf("source message %s: %w", sid, err)
		}
		det.Sources = append(det.Sources, msg)
	}
	return det, nil
}

// live returns the memory id when it is live, else ErrConflict naming what
// to do instead.
func (m *Manager) live(ctx context.Context, scope imprint.Scope, id string) (imprint.Memory, error) {
	mem, err := m.d.Store.GetMemory(ctx, scope, id)
	if err != nil {
		return mem, err
	}
	if mem.SupersededBy != nil {
		return mem, imprint.Conflictf("memory %q is superseded by %q: change its live version", id, *mem.SupersededBy)
	}
	if mem.ForgottenAt != nil {
		return mem, imprint.Conflictf("memory %q is forgotten: remember the text again instead", id)
	}
	return mem, nil
}

// Edit writes a corrected version of a live memory; see imprint.Memories.
func (m *Manager) Edit(ctx context.Context, r imprint.EditRequest) (imprint.Memory, error) {
	if err := r.Scope.Validate(); err != nil {
		return imprint.Memory{}, err
	}
	content, err := m.text("content", r.Content)
	if err != nil {
		return imprint.Memory{}, err
	}
	typ, err := parseType(r.Type)
	if err != nil {
		return imprint.Memory{}, err
	}
	old, err := m.live(ctx, r.Scope, r.ID)
	if err != nil {
		return imprint.Memory{}, err
	}
	v, err := m.d.Extract.Revise(ctx, old, content, typ)
	if err != nil {
		return imprint.Memory{}, fmt.Errorf("edit memory %s: %w", r.ID, err)
	}
	return v, nil
}

// Forget retires a live memory; see imprint.Memories.
func (m *Manager) Forget(ctx context.Context, scope imprint.Scope, id string) (imprint.Memory, error) {
	mem, err := m.d.Store.GetMemory(ctx, scope, id)
	if err != nil {
		return mem, err
	}
	if mem.ForgottenAt != nil {
		return mem, nil
	}
	if mem.SupersededBy != nil {
		return mem, imprint.Conflictf("memory %q is superseded by %q: forget its live version", id, *mem.SupersededBy)
	}
	return m.forget(ctx, mem)
}

// forget logs the forget line of a live memory, then retires it in the
// store; when the store fails, the memory's state before is logged again
// so a replay keeps it live.
func (m *Manager) forget(ctx context.Context, mem imprint.Memory) (imprint.Memory, error) {
	now := imprint.At(m.now())
	gone := mem
	gone.ForgottenAt = &now
	if err := m.log(now, extract.RecordLine{Op: imprint.OpLineForget, At: now, Memory: gone}); err != nil {
		return imprint.Memory{}, fmt.Errorf("forget memory %s: %w", mem.ID, err)
	}
	got, err := m.d.Store.RetireMemory(ctx, mem.Scope, mem.ID, now.Time)
	if err != nil {
		if lerr := m.log(now, extract.RecordLine{Op: extract.OpLineStore, At: now, Memory: mem}); lerr != nil {
			m.d.Logger.Warn("forget: store failed and the records log could not be restored", "memory_id", mem.ID, "error", lerr)
		}
		return imprint.Memory{}, fmt.Errorf("forget memory %s: %w", mem.ID, err)
	}
	return got, nil
}

func (m *Manager) log(at imprint.Time, lines ...any) error {
	if m.d.Records == nil {
		return nil
	}
	return m.d.Records.Append(lines, func(int) time.Time { return at.Time })
}

// ForgetMany retires the live memories f selects; see imprint.Memories.
func (m *Manager) ForgetMany(ctx context.Context, scope imprint.Scope, f imprint.ForgetFilter) (int, error) {
	if f.SessionID == "" && f.Before.IsZero() {
		return 0, imprint.Invalidf("forget needs a session or a date to select memories by")
	}
	ms, err := m.d.Store.ListMemories(ctx, scope, imprint.MemoryFilter{SessionID: f.SessionID, Limit: imprint.NoLimit})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, mem := range ms {
		if !f.Before.IsZero() && !mem.UpdatedAt.Before(f.Before) {
			continue
		}
		if f.DryRun {
			n++
			continue
		}
		if _, err := m.forget(ctx, mem); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Purge removes a memory's whole version chain everywhere; see
// imprint.Memories. The shards go first: a purge that fails half-way can
// be run again, as the store still holds what it did not remove.
func (m *Manager) Purge(ctx context.Context, scope imprint.Scope, id string, o imprint.PurgeOptions) (imprint.PurgeResult, error) {
	chain, err := m.chain(ctx, scope, id)
	if err != nil {
		return imprint.PurgeResult{}, err
	}
	res := imprint.PurgeResult{MemoryIDs: []string{}, MessageIDs: []string{}}
	ids := map[string]bool{}
	sources := map[string][]string{} // session → message ids
	seenMsg := map[[2]string]bool{}
	for _, mem := range chain {
		ids[mem.ID] = true
		res.MemoryIDs = append(res.MemoryIDs, mem.ID)
		for _, sid := range mem.SourceMessageIDs {
			k := [2]string{mem.SessionID, sid}
			if !seenMsg[k] {
				seenMsg[k] = true
				sources[mem.SessionID] = append(sources[mem.SessionID], sid)
			}
		}
	}
	idBytes := make([][]byte, 0, len(ids))
	for id := range ids {
		idBytes = append(idBytes, jsonText(id))
	}
	n, err := rewrite(m.d.Records, func(line []byte) bool {
		if !containsAny(line, idBytes) {
			return true // most lines: no JSON to read
		}
		var l struct {
			Memory struct {
				ID    string        `json:"id"`
				Scope imprint.Scope `json:"scope"`
			} `json:"memory"`
		}
		return json.Unmarshal(line, &l) != nil || !ids[l.Memory.ID] || !sameScope(l.Memory.Scope, scope)
	})
	res.ShardLines += n
	if err != nil {
		return res, fmt.Errorf("purge records log: %w", err)
	}
	if o.WithSources && len(sources) > 0 {
		var msgBytes [][]byte
		for k := range seenMsg {
			msgBytes = append(msgBytes, jsonText(k[1]))
		}
		n, err := rewrite(m.d.Conversations, func(line []byte) bool {
			if !containsAny(line, msgBytes) {
				return true
			}
			var l struct {
				ID        string        `json:"id"`
				SessionID string        `json:"session_id"`
				Scope     imprint.Scope `json:"scope"`
			}
			return json.Unmarshal(line, &l) != nil || !seenMsg[[2]string{l.SessionID, l.ID}] || !sameScope(l.Scope, scope)
		})
		res.ShardLines += n
		if err != nil {
			return res, fmt.Errorf("purge conversations log: %w", err)
		}
	}
	if _, err := m.d.Store.PurgeMemories(ctx, scope, res.MemoryIDs); err != nil {
		return res, err
	}
	if o.WithSources {
		for session, msgIDs := range sources {
			got, err := m.d.Store.PurgeMessages(ctx, scope, session, msgIDs)
			if err != nil {
				return res, err
			}
			res.MessageIDs = append(res.MessageIDs, got...)
		}
	}
	m.d.Logger.Info("memory purged", "scope", scope.String(), "memory_ids", res.MemoryIDs,
		"messages", len(res.MessageIDs), "shard_lines", res.ShardLines)
	return res, nil
}

// chain returns the whole version chain of id: its live head (or last
// version) and every version that head supersedes, transitively.
func (m *Manager) chain(ctx context.Context, scope imprint.Scope, id string) ([]imprint.Memory, error) {
	head, err := m.d.Store.GetMemory(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	for n := 0; head.SupersededBy != nil && n < 1024; n++ {
		next, err := m.d.Store.GetMemory(ctx, scope, *head.SupersededBy)
		if errors.Is(err, imprint.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		head = next
	}
	hist, err := m.d.Store.MemoryHistory(ctx, scope, head.ID)
	if err != nil {
		return nil, err
	}
	return append([]imprint.Memory{head}, hist...), nil
}

// jsonText is s as it appears inside a JSON string written by
// encoding/json (the shards' writer), without the quotes.
func jsonText(s string) []byte {
	b, _ := json.Marshal(s)
	return b[1 : len(b)-1]
}

// containsAny reports whether line holds one of subs.
func containsAny(line []byte, subs [][]byte) bool {
	for _, s := range subs {
		if bytes.Contains(line, s) {
			return true
		}
	}
	return false
}

func sameScope(a, b imprint.Scope) bool {
	return a.Tenant == b.Tenant && a.User == b.User && a.Agent == b.Agent
}

// rewrite drops the lines keep rejects from log when it can be rewritten.
func rewrite(log imprint.RecordLog, keep func([]byte) bool) (int, error) {
	if log == nil {
		return 0, nil
	}
	rw, ok := imprint.AsLogRewriter(log)
	if !ok {
		return 0, fmt.Errorf("%w: the log cannot remove lines, so the purged text would stay in it", imprint.ErrUnavailable)
	}
	return rw.Rewrite(keep)
}
