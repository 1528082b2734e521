package search

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	imprint "github.com/imprint-dev/imprint"
)

// PrefixStore is a keyword search whose shallow answers are the first hits
// of its deep ones: for a query q it reports true of, SearchText with a
// smaller Limit returns exactly the first hits (the same records, scores
// and order) that q's returns. The SQLite store says so for memory and
// trace queries reading one keyword index.
type PrefixStore interface {
	TextPrefixStable(q imprint.TextQuery) bool
}

// depthOf is how deep each list of a search of limit hits is fetched, so
// fusion has room to promote hits that rank well in another list.
func depthOf(limit int) int { return max(limit*3, 20) }

// SearchAndRecall returns what Search(sq) and Recall(rq) return, run
// together as the viewer's search page shows them (rq.Text is sq.Text):
// a keyword search that both make (the same kind, text and filters, the
// recall's less deep) is made once, at the search's depth, and the recall
// gets its first hits, when the store says they are exactly what the
// recall's own search would return (PrefixStore). Every other read is the
// two's own.
func (r Recaller) SearchAndRecall(ctx context.Context, sq imprint.SearchQuery, rq imprint.RecallQuery) ([]imprint.Hit, imprint.RecallResult, error) {
	limit := sq.Limit
	if limit <= 0 {
		limit = imprint.DefaultSearchLimit
	}
	kinds := sq.Kinds
	if len(kinds) == 0 {
		kinds, _ = imprint.ParseKind("all")
	}
	st := &sharedText{Searcher: r.Store, depth: depthOf(limit), searched: map[imprint.Kind]bool{}, calls: map[string]*sharedCall{},
		session: sq.SessionID, workspace: sq.Workspace}
	for _, k := range kinds {
		st.searched[k] = true
	}
	shared := r.Searcher
	shared.Store = st
	rr := r
	rr.Searcher = shared
	var hits []imprint.Hit
	var rec imprint.RecallResult
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		if hits, err = shared.Search(gctx, sq); err != nil {
			return fmt.Errorf("search: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		var err error
		if rec, err = rr.Recall(gctx, rq); err != nil {
			return fmt.Errorf("recall: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, imprint.RecallResult{}, err
	}
	return hits, rec, nil
}

// sharedText is a store, for one SearchAndRecall, that makes each
// prefix-stable keyword search once, depth deep when it is one the search
// makes (of a kind it reads, with its session and workspace), and answers
// the same search of any smaller limit with its first hits.
type sharedText struct {
	imprint.Searcher
	depth              int
	searched           map[imprint.Kind]bool
	session, workspace string
	mu                 sync.Mutex
	calls              map[string]*sharedCall
}

// sharedCall is one search made for all who ask: done closes when hits
// and err are set.
type sharedCall struct {
	done  chan struct{}
	limit int
	hits  []imprint.Hit
	err   error
}

func (s *sharedText) SearchText(ctx context.Context, q imprint.TextQuery) ([]imprint.Hit, error) {
	ps, ok := s.Searcher.(PrefixStore)
	if !ok || len(q.ExcludeIDs) > 0 || !ps.TextPrefixStable(q) {
		return s.Searcher.SearchText(ctx, q)
	}
	limit := imprint.SearchLimit(q.Limit)
	key := fmt.Sprintf("%q", []any{q.Scope.Tenant, q.Scope.User, q.Scope.Agent, string(q.Kind), q.Text, q.SessionID, q.Workspace, q.IncludeGlobal})
	s.mu.Lock()
	c, found := s.calls[key]
	if !found {
		c = &sharedCall{done: make(chan struct{}), limit: limit}
		if s.searched[q.Kind] && q.SessionID == s.session && q.Workspace == s.workspace && !q.IncludeGlobal {
			c.limit = imprint.SearchLimit(max(limit, s.depth))
		}
		s.calls[key] = c
	}
	s.mu.Unlock()
	if !found {
		deep := q
		deep.Limit = c.limit
		c.hits, c.err = s.Searcher.SearchText(ctx, deep)
		close(c.done)
	} else {
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	if limit > c.limit {
		return s.Searcher.SearchText(ctx, q)
	}
	return append([]imprint.Hit(nil), c.hits[:min(limit, len(c.hits))]...), nil
}
