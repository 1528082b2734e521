package httpapi

import (
	"net/http"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// memoriesBody is the reply of GET /v1/memories.
type memoriesBody struct {
	Memories []imprint.Memory `json:"memories"`
}

// MemoryWithHistory is a memory with the versions it supersedes,
// transitively, newest first: the reply of GET /v1/memories/{id}.
type MemoryWithHistory struct {
	imprint.Memory
	History []imprint.Memory `json:"history"`
}

// getMemories → {"memories"} newest first, filtered by session, type,
// limit and all_versions.
func (s *Server) getMemories(w http.ResponseWriter, r *http.Request) error {
	scope, err := queryScope(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	session, err := idParam(q, "session")
	if err != nil {
		return err
	}
	f := imprint.MemoryFilter{SessionID: session}
	if f.Workspace, err = idParam(q, "workspace"); err != nil {
		return err
	}
	f.Type = imprint.MemoryType(strings.TrimSpace(q.Get("type")))
	if f.Limit, err = intParam(q, "limit", 100); err != nil {
		return err
	}
	if f.AllVersions, err = boolParam(q, "all_versions"); err != nil {
		return err
	}
	if err := f.Check(); err != nil { // limit=0 lists them all
		return err
	}
	ms, err := s.d.Store.ListMemories(r.Context(), scope, f)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, memoriesBody{Memories: nonNil(ms)})
}

// getMemory → the memory with "history", and "sources" when the server
// manages memories (imprint.MemoryDetail).
func (s *Server) getMemory(w http.ResponseWriter, r *http.Request) error {
	scope, id, err := scopedGet(r, "memory")
	if err != nil {
		return err
	}
	if s.d.Memories != nil {
		det, err := s.d.Memories.Show(r.Context(), scope, id)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, det)
	}
	m, err := s.d.Store.GetMemory(r.Context(), scope, id)
	if err != nil {
		return err
	}
	hist, err := s.d.Store.MemoryHistory(r.Context(), scope, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, MemoryWithHistory{Memory: m, History: nonNil(hist)})
}
