package viewer

import (
	"fmt"
	"net/http"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

type searchData struct {
	Text, Kind string
	Hits       []imprint.Hit
	Recall     *imprint.RecallResult
	Tokens     int
	Budget     int
	// Missing names what the server was started without.
	Missing string
}

func (h *Handler) search(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	d := searchData{Text: strings.TrimSpace(q.Get("q")), Kind: q.Get("kind"), Budget: intParam(r, "budget", imprint.DefaultRecallBudget, 8000)}
	kinds, err := imprint.ParseKind(d.Kind)
	if err != nil {
		return err
	}
	if d.Text != "" {
		if h.d.Search == nil || h.d.Recall == nil {
			d.Missing = "search"
		} else {
			ctx := r.Context()
			if d.Hits, err = h.d.Search.Search(ctx, imprint.SearchQuery{Scope: v.Scope, Text: d.Text, Kinds: kinds, Limit: intParam(r, "limit", 20, 100)}); err != nil {
				return fmt.Errorf("search: %w", err)
			}
			rec, err := h.d.Recall.Recall(ctx, imprint.RecallQuery{Scope: v.Scope, Text: d.Text, BudgetTokens: d.Budget})
			if err != nil {
				return fmt.Errorf("recall: %w", err)
			}
			d.Recall, d.Tokens = &rec, imprint.EstimateTokens(rec.Context)
		}
	}
	v.Title, v.Nav, v.Data = "Search", "search", d
	return h.render(w, "search", v)
}

func (h *Handler) live(w http.ResponseWriter, r *http.Request, v *view) error {
	d := episodesData{}
	if b, ok := imprint.AsBrowser(h.d.Store); ok {
		eps, err := b.ListEpisodes(r.Context(), v.Scope, imprint.EpisodeFilter{Limit: 12})
		if err != nil {
			return fmt.Errorf("live episodes: %w", err)
		}
		d.Episodes = cards(eps)
	}
	v.Title, v.Nav, v.Data = "Live", "live", d
	return h.render(w, "live", v)
}
