package httpapi

import (
	"net/http"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// hitsBody is the reply of GET /v1/search.
type hitsBody struct {
	Hits []imprint.Hit `json:"hits"`
}

// getSearch → {"hits"}: hybrid search of q over kind (memory, trace,
// message or all), optionally within one session.
func (s *Server) getSearch(w http.ResponseWriter, r *http.Request) error {
	scope, err := queryScope(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	text := strings.TrimSpace(q.Get("q"))
	if text == "" {
		return imprint.Invalidf("q is required")
	}
	if err := imprint.ValidateText("q", text); err != nil {
		return err
	}
	session, err := idParam(q, "session")
	if err != nil {
		return err
	}
	kinds, err := imprint.ParseKind(q.Get("kind"))
	if err != nil {
		return err
	}
	workspace, err := idParam(q, "workspace")
	if err != nil {
		return err
	}
	limit, err := intParam(q, "limit", imprint.DefaultSearchLimit)
	if err != nil {
		return err
	}
	sq := imprint.SearchQuery{Scope: scope, Text: text, Kinds: kinds, SessionID: session, Workspace: workspace, Limit: limit}
	if err := sq.Check(); err != nil { // the limit capped at imprint.MaxSearchLimit, as the CLI's
		return err
	}
	if s.d.Search == nil {
		return errNoSearch
	}
	hits, err := s.d.Search.Search(r.Context(), sq)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, hitsBody{Hits: nonNil(hits)})
}

// getRecall → {"context", "hits"}: the token-budgeted block an agent
// injects before answering, standing instructions first.
func (s *Server) getRecall(w http.ResponseWriter, r *http.Request) error {
	scope, err := queryScope(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	budget, err := intParam(q, "budget_tokens", imprint.DefaultRecallBudget)
	if err != nil {
		return err
	}
	text := strings.TrimSpace(q.Get("q"))
	if err := imprint.ValidateText("q", text); err != nil {
		return err
	}
	session, err := idParam(q, "session")
	if err != nil {
		return err
	}
	persona, err := boolParam(q, "persona")
	if err != nil {
		return err
	}
	workspace, err := idParam(q, "workspace")
	if err != nil {
		return err
	}
	if s.d.Recall == nil {
		return errNoRecall
	}
	res, err := s.d.Recall.Recall(r.Context(), imprint.RecallQuery{Scope: scope, Text: text,
		SessionID: session, Workspace: workspace, BudgetTokens: budget, Persona: persona})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}
