package viewer

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/sync/errgroup"

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

// searchRecaller runs a search and the recall of the same query together,
// sharing the reads both would make (search.Recaller).
type searchRecaller interface {
	SearchAndRecall(ctx context.Context, sq imprint.SearchQuery, rq imprint.RecallQuery) ([]imprint.Hit, imprint.RecallResult, error)
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
			sq := imprint.SearchQuery{Scope: v.Scope, Text: d.Text, Kinds: kinds, Limit: intParam(r, "limit", 20, 100)}
			rq := imprint.RecallQuery{Scope: v.Scope, Text: d.Text, BudgetTokens: d.Budget}
			var rec imprint.RecallResult
			if sr, ok := h.d.Recall.(searchRecaller); ok {
				if d.Hits, rec, err = sr.SearchAndRecall(r.Context(), sq, rq); err != nil {
					return err
				}
			} else {
				// The search and the recall are independent: run together.
				g, ctx := errgroup.WithContext(r.Context())
				g.Go(func() error {
					hits, err := h.d.Search.Search(ctx, sq)
					if err != nil {
						return fmt.Errorf("search: %w", err)
					}
					d.Hits = hits
					return nil
				})
				g.Go(func() error {
					var err error
					if rec, err = h.d.Recall.Recall(ctx, rq); err != nil {
						return fmt.Errorf("recall: %w", err)
					}
					return nil
				})
				if err := g.Wait(); err != nil {
					return err
				}
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
		if d.Episodes, err = h.cards(r.Context(), v.Scope, eps); err != nil {
			return err
		}
	}
	v.Title, v.Nav, v.Data = "Live", "live", d
	return h.render(w, "live", v)
}
