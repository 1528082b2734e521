package viewer

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

type memoriesData struct {
	Type, Session, Text string
	Workspace           string
	Types               []imprint.MemoryType
	Memories            []imprint.Memory
	Limit               int
	// More links the next, larger page when this one is full.
	More   string
	Notice string
}

var memoryTypes = []imprint.MemoryType{imprint.MemoryPersona, imprint.MemoryEpisodic, imprint.MemoryInstruction}

func (h *Handler) memories(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	d := memoriesData{Type: q.Get("type"), Session: strings.TrimSpace(q.Get("session")), Text: strings.TrimSpace(q.Get("q")),
		Workspace: strings.TrimSpace(q.Get("workspace")),
		Types:     memoryTypes, Limit: intParam(r, "limit", pageSize, maxPageSize), Notice: notice(q)}
	if d.Type != "" && !imprint.MemoryType(d.Type).Valid() {
		return imprint.Invalidf("type %q: want persona, episodic or instruction", d.Type)
	}
	ctx := r.Context()
	if d.Text == "" {
		ms, err := h.d.Store.ListMemories(ctx, v.Scope, imprint.MemoryFilter{SessionID: d.Session, Type: imprint.MemoryType(d.Type),
			Workspace: d.Workspace, Limit: d.Limit})
		if err != nil {
			return fmt.Errorf("list memories: %w", err)
		}
		d.Memories = ms
	} else {
		ms, err := h.searchMemories(r, v.Scope, d)
		if err != nil {
			return fmt.Errorf("search memories: %w", err)
		}
		d.Memories = ms
	}
	if len(d.Memories) >= d.Limit && d.Limit < maxPageSize {
		d.More = v.Link("/memories", "type", d.Type, "session", d.Session, "workspace", d.Workspace, "q", d.Text, "limit", fmt.Sprint(min(d.Limit*2, maxPageSize)))
	}
	v.Title, v.Nav, v.Data = "Memories", "memories", d
	return h.render(w, "memories", v)
}

type memoryData struct {
	Memory  imprint.Memory
	Live    bool
	History []imprint.Memory
	Sources []imprint.Message
	// Missing are source ids the store no longer holds.
	Missing []string
	Types   []imprint.MemoryType
	// Confirm asks to confirm forgetting (the page without JavaScript).
	Confirm bool
	Notice  string
	// CanManage says the server can edit and forget memories.
	CanManage bool
}

func (h *Handler) memory(w http.ResponseWriter, r *http.Request, v *view) error {
	id := r.PathValue("id")
	det, err := h.detail(r, v.Scope, id)
	if err != nil {
		return fmt.Errorf("memory %s: %w", id, err)
	}
	m := det.Memory
	d := memoryData{Memory: m, Live: m.SupersededBy == nil && m.ForgottenAt == nil, History: det.History, Sources: det.Sources,
		Types: memoryTypes, Confirm: r.URL.Query().Get("confirm") == "forget", Notice: notice(r.URL.Query()),
		CanManage: h.d.Memories != nil}
	held := map[string]bool{}
	for _, s := range det.Sources {
		held[s.ID] = true
	}
	for _, sid := range m.SourceMessageIDs {
		if !held[sid] {
			d.Missing = append(d.Missing, sid)
		}
	}
	v.Title, v.Nav, v.Data = "Memory "+id, "memories", d
	return h.render(w, "memory", v)
}

// searchMemories returns up to d.Limit live memories matching d.Text, of
// type d.Type when set. The text search cannot filter by type, so when
// the filter leaves the page short it searches deeper (up to
// imprint.MaxSearchLimit hits) until the page is full or the matches run
// out.
func (h *Handler) searchMemories(r *http.Request, scope imprint.Scope, d memoriesData) ([]imprint.Memory, error) {
	ctx := r.Context()
	seen := map[string]*imprint.Memory{}
	for n := d.Limit; ; n = min(n*4, imprint.MaxSearchLimit) {
		hits, err := h.d.Store.SearchText(ctx, imprint.TextQuery{Scope: scope, Kind: imprint.KindMemory, Text: d.Text, SessionID: d.Session,
			Workspace: d.Workspace, Limit: n})
		if err != nil {
			return nil, err
		}
		var out []imprint.Memory
		for _, hit := range hits {
			m, ok := seen[hit.ID]
			if !ok {
				got, err := h.d.Store.GetMemory(ctx, scope, hit.ID)
				switch {
				case errors.Is(err, imprint.ErrNotFound):
				case err != nil:
					return nil, err
				default:
					m = &got
				}
				seen[hit.ID] = m
			}
			if m != nil && (d.Type == "" || m.Type == imprint.MemoryType(d.Type)) && len(out) < d.Limit {
				out = append(out, *m)
			}
		}
		if len(out) >= d.Limit || len(hits) < n || n >= imprint.MaxSearchLimit {
			return out, nil
		}
	}
}

// detail is the memory with its history and sources: Memories.Show when
// the server manages memories, else the same read from the store.
func (h *Handler) detail(r *http.Request, scope imprint.Scope, id string) (imprint.MemoryDetail, error) {
	ctx := r.Context()
	if h.d.Memories != nil {
		return h.d.Memories.Show(ctx, scope, id)
	}
	var det imprint.MemoryDetail
	m, err := h.d.Store.GetMemory(ctx, scope, id)
	if err != nil {
		return det, err
	}
	det.Memory = m
	if det.History, err = h.d.Store.MemoryHistory(ctx, scope, id); err != nil {
		return det, err
	}
	for _, sid := range m.SourceMessageIDs {
		msg, err := h.d.Store.GetMessage(ctx, scope, m.SessionID, sid)
		switch {
		case errors.Is(err, imprint.ErrNotFound):
		case err != nil:
			return det, err
		default:
			det.Sources = append(det.Sources, msg)
		}
	}
	return det, nil
}
