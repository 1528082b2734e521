package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/wire"
)

// turnsBody is the reply of POST /v1/sessions/{id}/turns.
type turnsBody struct {
	EpisodeID string `json:"episode_id"`
	TurnCount int    `json:"turn_count"`
}

// endBody is the reply of POST /v1/sessions/{id}/end.
type endBody struct {
	EpisodeID       *string `json:"episode_id"`
	PendingMessages int     `json:"pending_messages"`
}

// extractBody is the reply of POST /v1/sessions/{id}/extract.
type extractBody struct {
	SessionID       string `json:"session_id"`
	PendingMessages int    `json:"pending_messages"`
}

func (s *Server) sessions() (Sessions, error) {
	if s.d.Sessions == nil {
		return nil, errNoSessions
	}
	return s.d.Sessions, nil
}

// Configuration faults of the server: internal errors (500).
var (
	errNoSessions = errors.New("live sessions are not enabled on this server")
	errNoJobs     = errors.New("background jobs are not enabled on this server")
	errNoRecorder = errors.New("recording is not enabled on this server")
	errNoSearch   = errors.New("search is not enabled on this server")
	errNoRecall   = errors.New("recall is not enabled on this server")
)

// postTurns appends {"scope", "turns"} to the session's open episode →
// 200 {"episode_id", "turn_count"}.
func (s *Server) postTurns(w http.ResponseWriter, r *http.Request) error {
	id, fields, scope, err := s.sessionCall(w, r, false)
	if err != nil {
		return err
	}
	if !present(fields, "turns") {
		return imprint.Invalidf("turns is required")
	}
	if err := s.checkCount(fields, "turns"); err != nil {
		return err
	}
	// Turns read exactly as an episode's, so the rules (content parts,
	// times, roles) and the error messages are the same.
	doc, err := json.Marshal(map[string]any{"session_id": id, "turns": fields["turns"]})
	if err != nil {
		return err
	}
	eps, _, err := wire.ReadEpisodes(bytes.NewReader(doc), "")
	if err != nil {
		return err
	}
	mgr, err := s.sessions()
	if err != nil {
		return err
	}
	ep, err := mgr.AppendTurns(r.Context(), scope, id, eps[0].Turns)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, turnsBody{EpisodeID: ep.ID, TurnCount: ep.TurnCount})
}

// postFinalize closes the open episode {"closed_by"} and enqueues its
// capture → 202 {"episode_id"}; 404 when the session has none open.
func (s *Server) postFinalize(w http.ResponseWriter, r *http.Request) error {
	id, fields, scope, err := s.sessionCall(w, r, true)
	if err != nil {
		return err
	}
	cb, err := stringField(fields, "closed_by")
	if err != nil {
		return err
	}
	closedBy := imprint.ClosedBy(cb)
	switch closedBy {
	case "":
		closedBy = imprint.ClosedFinalized
	case imprint.ClosedFinalized, imprint.ClosedAbandoned:
	default:
		return imprint.Invalidf("closed_by must be finalized or abandoned, not %q", cb)
	}
	mgr, err := s.sessions()
	if err != nil {
		return err
	}
	ep, err := mgr.Finalize(r.Context(), scope, id, closedBy)
	if err != nil {
		return err
	}
	s.wake()
	return writeJSON(w, http.StatusAccepted, episodeIDBody{EpisodeID: ep.ID})
}

// postEnd finalizes the open episode and forces extraction of the pending
// messages → 202 {"episode_id": id|null, "pending_messages"}.
func (s *Server) postEnd(w http.ResponseWriter, r *http.Request) error {
	id, _, scope, err := s.sessionCall(w, r, true)
	if err != nil {
		return err
	}
	mgr, err := s.sessions()
	if err != nil {
		return err
	}
	epID, pending, err := mgr.End(r.Context(), scope, id)
	if err != nil {
		return err
	}
	s.wake()
	return writeJSON(w, http.StatusAccepted, endBody{EpisodeID: epID, PendingMessages: pending})
}

// postExtract enqueues extraction of the session's pending messages →
// 202 {"session_id", "pending_messages"}; 404 when the session is not in
// scope. It is what `imprint extract --server` calls.
func (s *Server) postExtract(w http.ResponseWriter, r *http.Request) error {
	id, _, scope, err := s.sessionCall(w, r, true)
	if err != nil {
		return err
	}
	if _, err := s.d.Store.GetSession(r.Context(), scope, id); err != nil {
		return err
	}
	pending, err := s.d.Store.CountPending(r.Context(), scope, id)
	if err != nil {
		return err
	}
	if pending > 0 {
		if s.d.Ingest == nil {
			return errNoJobs
		}
		if err := s.d.Ingest.ExtractSession(r.Context(), scope, id); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusAccepted, extractBody{SessionID: id, PendingMessages: pending})
}
