package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

var errNoMemories = errors.New("memory management is not enabled on this server")

// postMemory adds a memory by hand: {"scope"?, "content", "type"?,
// "session_id"?, "workspace"?, "priority"?} → 201 {"memory", "action"}, or
// 200 when a live memory already said it (action "skip").
func (s *Server) postMemory(w http.ResponseWriter, r *http.Request) error {
	_, fields, err := s.readObject(w, r, false)
	if err != nil {
		return err
	}
	scope, err := scopeOf(r, fields)
	if err != nil {
		return err
	}
	req := imprint.RememberRequest{Scope: scope}
	if req.Content, err = requiredString(fields, "content"); err != nil {
		return err
	}
	var typ string
	if typ, err = stringField(fields, "type"); err != nil {
		return err
	}
	req.Type = imprint.MemoryType(typ)
	if req.SessionID, err = stringField(fields, "session_id"); err != nil {
		return err
	}
	if req.Workspace, err = stringField(fields, "workspace"); err != nil {
		return err
	}
	if present(fields, "priority") {
		var p int
		if err := json.Unmarshal(fields["priority"], &p); err != nil {
			return imprint.Invalidf("priority must be an integer")
		}
		req.Priority = &p
	}
	if s.d.Memories == nil {
		return errNoMemories
	}
	res, err := s.d.Memories.Remember(r.Context(), req)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Action == imprint.RememberDuplicate {
		status = http.StatusOK
	}
	return writeJSON(w, status, res)
}

// patchMemory corrects a live memory: {"scope"?, "content", "type"?} → 200
// the new version (§6), which supersedes it.
func (s *Server) patchMemory(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "memory")
	if err != nil {
		return err
	}
	_, fields, err := s.readObject(w, r, false)
	if err != nil {
		return err
	}
	scope, err := scopeOf(r, fields)
	if err != nil {
		return err
	}
	req := imprint.EditRequest{Scope: scope, ID: id}
	if req.Content, err = requiredString(fields, "content"); err != nil {
		return err
	}
	var typ string
	if typ, err = stringField(fields, "type"); err != nil {
		return err
	}
	req.Type = imprint.MemoryType(typ)
	if s.d.Memories == nil {
		return errNoMemories
	}
	m, err := s.d.Memories.Edit(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}

// deleteMemory forgets a memory → 200 the memory with forgotten_at; with
// purge=true it removes all its versions everywhere (with_sources=true
// also their source messages) → 200 {"memory_ids", "message_ids",
// "shard_lines"}.
func (s *Server) deleteMemory(w http.ResponseWriter, r *http.Request) error {
	scope, id, err := scopedGet(r, "memory")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	purge, err := boolParam(q, "purge")
	if err != nil {
		return err
	}
	withSources, err := boolParam(q, "with_sources")
	if err != nil {
		return err
	}
	if withSources && !purge {
		return imprint.Invalidf("with_sources needs purge=true")
	}
	if s.d.Memories == nil {
		return errNoMemories
	}
	if purge {
		res, err := s.d.Memories.Purge(r.Context(), scope, id, imprint.PurgeOptions{WithSources: withSources})
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, res)
	}
	m, err := s.d.Memories.Forget(r.Context(), scope, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}

// requiredString reads a string field that must be given and not blank.
func requiredString(fields map[string]json.RawMessage, key string) (string, error) {
	v, err := stringField(fields, key)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(v) == "" {
		return "", imprint.Invalidf("%s is required", key)
	}
	return v, nil
}

// forgetBody is the reply of POST /v1/memories/forget.
type forgetBody struct {
	Forgotten int `json:"forgotten"`
}

// postForget forgets in bulk: {"scope"?, "session_id"?, "before"?,
// "dry_run"?} (at least one of session_id and before) → 200
// {"forgotten": n}; with dry_run, n is what would be forgotten.
func (s *Server) postForget(w http.ResponseWriter, r *http.Request) error {
	_, fields, err := s.readObject(w, r, false)
	if err != nil {
		return err
	}
	scope, err := scopeOf(r, fields)
	if err != nil {
		return err
	}
	var f imprint.ForgetFilter
	if f.SessionID, err = stringField(fields, "session_id"); err != nil {
		return err
	}
	if present(fields, "before") {
		var t imprint.Time
		if err := json.Unmarshal(fields["before"], &t); err != nil {
			return imprint.Invalidf("before must be a time (RFC 3339 or epoch milliseconds)")
		}
		f.Before = t.Time
	}
	if present(fields, "dry_run") {
		if err := json.Unmarshal(fields["dry_run"], &f.DryRun); err != nil {
			return imprint.Invalidf("dry_run must be a boolean")
		}
	}
	if s.d.Memories == nil {
		return errNoMemories
	}
	n, err := s.d.Memories.ForgetMany(r.Context(), scope, f)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, forgetBody{Forgotten: n})
}

// ClientMemories is memory management through a running service: the
// imprint.Memories of the HTTP API, for the CLI's --server mode and for a
// purge while `imprint serve` holds the data dir.
type ClientMemories struct{ C *Client }

var _ imprint.Memories = ClientMemories{}

// Remember adds a memory by hand (POST /v1/memories).
func (m ClientMemories) Remember(ctx context.Context, r imprint.RememberRequest) (imprint.RememberResult, error) {
	body := map[string]any{"scope": r.Scope.WithDefaults(), "content": r.Content}
	if r.Type != "" {
		body["type"] = r.Type
	}
	if r.SessionID != "" {
		body["session_id"] = r.SessionID
	}
	if r.Workspace != "" {
		body["workspace"] = r.Workspace
	}
	if r.Priority != nil {
		body["priority"] = *r.Priority
	}
	var out imprint.RememberResult
	err := m.C.do(ctx, http.MethodPost, "/v1/memories", nil, body, &out)
	return out, err
}

// Show reads a memory with its history and sources (GET /v1/memories/{id}).
func (m ClientMemories) Show(ctx context.Context, scope imprint.Scope, id string) (imprint.MemoryDetail, error) {
	var out imprint.MemoryDetail
	err := m.C.do(ctx, http.MethodGet, memoryURL(id), scopeQuery(scope), nil, &out)
	return out, err
}

// Edit writes a corrected version (PATCH /v1/memories/{id}).
func (m ClientMemories) Edit(ctx context.Context, r imprint.EditRequest) (imprint.Memory, error) {
	body := map[string]any{"scope": r.Scope.WithDefaults(), "content": r.Content}
	if r.Type != "" {
		body["type"] = r.Type
	}
	var out imprint.Memory
	err := m.C.do(ctx, http.MethodPatch, memoryURL(r.ID), nil, body, &out)
	return out, err
}

// Forget retires a memory (DELETE /v1/memories/{id}).
func (m ClientMemories) Forget(ctx context.Context, scope imprint.Scope, id string) (imprint.Memory, error) {
	var out imprint.Memory
	err := m.C.do(ctx, http.MethodDelete, memoryURL(id), scopeQuery(scope), nil, &out)
	return out, err
}

// Purge removes a memory's versions everywhere (DELETE
// /v1/memories/{id}?purge=true).
func (m ClientMemories) Purge(ctx context.Context, scope imprint.Scope, id string, o imprint.PurgeOptions) (imprint.PurgeResult, error) {
	q := scopeQuery(scope)
	q.Set("purge", "true")
	if o.WithSources {
		q.Set("with_sources", "true")
	}
	var out imprint.PurgeResult
	err := m.C.do(ctx, http.MethodDelete, memoryURL(id), q, nil, &out)
	return out, err
}

// ForgetMany forgets in bulk (POST /v1/memories/forget).
func (m ClientMemories) ForgetMany(ctx context.Context, scope imprint.Scope, f imprint.ForgetFilter) (int, error) {
	body := map[string]any{"scope": scope.WithDefaults()}
	if f.SessionID != "" {
		body["session_id"] = f.SessionID
	}
	if !f.Before.IsZero() {
		body["before"] = imprint.At(f.Before)
	}
	if f.DryRun {
		body["dry_run"] = true
	}
	var out forgetBody
	err := m.C.do(ctx, http.MethodPost, "/v1/memories/forget", nil, body, &out)
	return out.Forgotten, err
}

func memoryURL(id string) string { return "/v1/memories/" + url.PathEscape(id) }
