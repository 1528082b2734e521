package httpapi

import (
	"bytes"
	"net/http"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/wire"
)

// episodeIDBody is the reply of the endpoints that accept or close an episode.
type episodeIDBody struct {
	EpisodeID string `json:"episode_id"`
}

// postEpisode accepts a §4.1 episode: it is saved and its capture job
// enqueued in one transaction → 202 {"episode_id"}; capture runs in the
// background. An id owned by another scope is a 409 and writes nothing.
func (s *Server) postEpisode(w http.ResponseWriter, r *http.Request) error {
	body, fields, err := s.readObject(w, r, false)
	if err != nil {
		return err
	}
	scope, err := scopeOf(r, fields)
	if err != nil {
		return err
	}
	if sid, err := stringField(fields, "session_id"); err != nil {
		return err
	} else if strings.TrimSpace(sid) == "" {
		return imprint.Invalidf("session_id is required")
	}
	if !present(fields, "turns") {
		return imprint.Invalidf("turns is required")
	}
	if err := s.checkCount(fields, "turns"); err != nil {
		return err
	}
	eps, _, err := wire.ReadEpisodes(bytes.NewReader(body), "")
	if err != nil {
		return err
	}
	if len(eps) != 1 {
		return imprint.Invalidf("request body must be one episode")
	}
	ep := eps[0]
	ep.Scope = scope
	ep, err = imprint.PrepareEpisode(ep, "", imprint.Now(), s.d.Redact)
	if err != nil {
		return err
	}
	job := imprint.Job{Kind: imprint.JobCapture, Scope: ep.Scope, SessionID: ep.SessionID, EpisodeID: ep.ID,
		UniqueKey: imprint.CaptureJobKey(ep.Scope, ep.ID)}
	if err := s.d.Store.SubmitEpisode(r.Context(), ep, job); err != nil {
		return err
	}
	s.wake()
	return writeJSON(w, http.StatusAccepted, episodeIDBody{EpisodeID: ep.ID})
}

// getEpisode → the episode.
func (s *Server) getEpisode(w http.ResponseWriter, r *http.Request) error {
	scope, id, err := scopedGet(r, "episode")
	if err != nil {
		return err
	}
	ep, err := s.d.Store.GetEpisode(r.Context(), scope, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ep)
}

// tracesBody is the reply of the trace list endpoints.
type tracesBody struct {
	Traces []imprint.Trace `json:"traces"`
}

// getEpisodeTraces → {"traces"} of one episode in step order; 404 when the
// episode is not in scope.
func (s *Server) getEpisodeTraces(w http.ResponseWriter, r *http.Request) error {
	scope, id, err := scopedGet(r, "episode")
	if err != nil {
		return err
	}
	ep, err := s.d.Store.GetEpisode(r.Context(), scope, id)
	if err != nil {
		return err
	}
	limit, err := intParam(r.URL.Query(), "limit", max(len(ep.TraceIDs), 100))
	if err != nil {
		return err
	}
	ts, err := s.d.Store.ListTraces(r.Context(), scope, imprint.TraceFilter{EpisodeID: id, Limit: limit})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, tracesBody{Traces: nonNil(ts)})
}

// getTraces → {"traces"} of the scope, filtered by the episode and session
// query parameters, in step order (what `imprint traces` lists).
func (s *Server) getTraces(w http.ResponseWriter, r *http.Request) error {
	scope, err := queryScope(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := intParam(q, "limit", 100)
	if err != nil {
		return err
	}
	var f imprint.TraceFilter
	if f.EpisodeID, err = idParam(q, "episode"); err != nil {
		return err
	}
	if f.SessionID, err = idParam(q, "session"); err != nil {
		return err
	}
	if f.Workspace, err = idParam(q, "workspace"); err != nil {
		return err
	}
	f.Limit = limit
	if err := f.Check(); err != nil { // limit=0 lists them all
		return err
	}
	ts, err := s.d.Store.ListTraces(r.Context(), scope, f)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, tracesBody{Traces: nonNil(ts)})
}

// getTrace → the trace.
func (s *Server) getTrace(w http.ResponseWriter, r *http.Request) error {
	scope, id, err := scopedGet(r, "trace")
	if err != nil {
		return err
	}
	t, err := s.d.Store.GetTrace(r.Context(), scope, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// nonNil turns a nil slice into an empty one so it encodes as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
