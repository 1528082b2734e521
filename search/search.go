package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	imprint "github.com/imprint-dev/imprint"
)

// RRFK is the k of reciprocal rank fusion: a hit at rank r (1-based) in one
// list adds 1/(RRFK+r) to its fused score.
const RRFK = 60

// Cosine floors of vector matches: below it a match is not a hit. Every
// record is some distance from any query, so without a floor a query that
// matches nothing ("zzzzqqq") would still list the nearest records as if
// they were relevant. A lexical embedder (the hash) needs the higher floor:
// its short-text vectors collide by chance, and on the LoCoMo messages
// gibberish queries reach cosines of 0.25 while the best match of a real
// question is above 0.27 for 95 % of them (docs/benchmarks.md).
const (
	DefaultMinScore = 0.15
	LexicalMinScore = 0.3
)

// searchWorkers bounds the searches of one query that run at once.
const searchWorkers = 4

// Searcher runs hybrid searches. Embedder may be nil: then only keywords
// are used.
type Searcher struct {
	Store    imprint.Searcher
	Embedder imprint.Embedder
}

// minScore is the cosine floor of the embedder's vector matches.
func minScore(e imprint.Embedder) float64 {
	if imprint.IsLexical(e) {
		return LexicalMinScore
	}
	return DefaultMinScore
}

// Search returns up to q.Limit hits, best first, fusing the keyword and
// vector rankings of every requested kind (see fuseHybrid; vector matches
// below the embedder's cosine floor are none). A query that no keyword and
// no vector above the floor matches returns no hits. An embedding failure
// degrades to keyword search rather than failing. It returns ErrInvalid for
// an empty query or scope.
func (s Searcher) Search(ctx context.Context, q imprint.SearchQuery) ([]imprint.Hit, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, imprint.Invalidf("query text is required")
	}
	if err := q.Scope.Validate(); err != nil {
		return nil, err
	}
	if q.Limit <= 0 {
		q.Limit = imprint.DefaultSearchLimit
	}
	kinds := q.Kinds
	if len(kinds) == 0 {
		kinds, _ = imprint.ParseKind("all")
	}
	depth := depthOf(q.Limit)
	// The searches of every kind are independent: they run concurrently
	// (bounded), each into its own slot, so the fused order is the same as
	// run one after the other. A lexical embedder's vectors only fill
	// places the keywords leave (fuseHybrid), so they are searched only
	// when the keywords found fewer hits than the limit.
	lexical := imprint.IsLexical(s.Embedder)
	text, vecs := make([][]imprint.Hit, len(kinds)), make([][]imprint.Hit, len(kinds))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(searchWorkers)
	for i, k := range kinds {
		g.Go(func() error {
			th, err := s.Store.SearchText(gctx, imprint.TextQuery{Scope: q.Scope, Kind: k, Text: q.Text, SessionID: q.SessionID,
				Workspace: q.Workspace, Limit: depth})
			if err != nil {
				return fmt.Errorf("search %s text: %w", k, err)
			}
			text[i] = th
			return nil
		})
	}
	if s.Embedder != nil && !lexical {
		s.searchVectors(gctx, g, q, kinds, depth, vecs)
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if s.Embedder != nil && lexical && len(Fuse(q.Limit, text...)) < q.Limit {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(searchWorkers)
		s.searchVectors(gctx, g, q, kinds, depth, vecs)
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	return fuseHybrid(q.Limit, depth, lexical, text, vecs), nil
}

// searchVectors embeds the query and starts, in g, one vector search per
// kind into its slot of vecs. An embedding failure starts none: search
// degrades to keywords.
func (s Searcher) searchVectors(ctx context.Context, g *errgroup.Group, q imprint.SearchQuery, kinds []imprint.Kind, depth int, vecs [][]imprint.Hit) {
	vs, err := s.Embedder.Embed(ctx, []string{q.Text})
	if err != nil || len(vs) != 1 || len(vs[0]) == 0 {
		return
	}
	for i, k := range kinds {
		g.Go(func() error {
			vh, err := s.Store.SearchVector(ctx, imprint.VectorQuery{Scope: q.Scope, Kind: k, Vector: vs[0], Embedder: s.Embedder.Name(),
				SessionID: q.SessionID, Workspace: q.Workspace, MinScore: minScore(s.Embedder), Limit: depth})
			if err != nil {
				return fmt.Errorf("search %s vectors: %w", k, err)
			}
			vecs[i] = vh
			return nil
		})
	}
}

// fuseHybrid fuses a search's keyword lists and vector lists (searched
// depth deep). A semantic embedder's lists are a second opinion: every list
// counts fully in reciprocal rank fusion. A lexical embedder's lists only
// repeat the keywords' signal — ranked with them at any weight they lowered
// recall on the LoCoMo benchmark (docs/benchmarks.md) — so they are not
// ranked at all: their hits fill the places the keywords left empty, best
// cosine first, each scored below every keyword hit. Either way, hybrid
// search never returns fewer hits than keywords alone, and with a lexical
// embedder it keeps the keyword hits in their order.
func fuseHybrid(limit, depth int, lexical bool, text, vecs [][]imprint.Hit) []imprint.Hit {
	if !lexical {
		return Fuse(limit, append(slices.Clone(text), vecs...)...)
	}
	out := Fuse(limit, text...)
	if len(out) >= limit {
		return out
	}
	seen := make(map[string]bool, len(out))
	for _, h := range out {
		seen[hitKey(h)] = true
	}
	var extra []imprint.Hit
	for _, l := range vecs {
		extra = append(extra, l...)
	}
	slices.SortStableFunc(extra, func(a, b imprint.Hit) int { return cmp.Compare(b.Score, a.Score) })
	for _, h := range extra {
		if len(out) == limit {
			break
		}
		if seen[hitKey(h)] {
			continue
		}
		seen[hitKey(h)] = true
		// Below any fused keyword hit, which scores at least 1/(RRFK+depth).
		h.Score = 1 / float64(RRFK+depth+len(out)+1)
		if h.SourceMessageIDs == nil {
			h.SourceMessageIDs = []string{}
		}
		out = append(out, h)
	}
	return out
}

func hitKey(h imprint.Hit) string { return string(h.Kind) + "\x00" + h.ID }

// Fuse merges ranked lists by reciprocal rank fusion (k = RRFK) and returns
// the best limit hits. A hit is identified by kind and id; its text and
// provenance come from the first list that has it. Ties keep the order of
// first appearance.
func Fuse(limit int, lists ...[]imprint.Hit) []imprint.Hit {
	type entry struct {
		hit   imprint.Hit
		score float64
		first int
	}
	byKey := map[string]*entry{}
	n := 0
	for _, l := range lists {
		for rank, h := range l {
			key := hitKey(h)
			e, ok := byKey[key]
			if !ok {
				e = &entry{hit: h, first: n}
				byKey[key] = e
				n++
			}
			e.score += 1 / float64(RRFK+rank+1)
		}
	}
	out := make([]*entry, 0, len(byKey))
	for _, e := range byKey {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].first < out[j].first
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	hits := make([]imprint.Hit, len(out))
	for i, e := range out {
		hits[i] = e.hit
		hits[i].Score = e.score
		if hits[i].SourceMessageIDs == nil {
			hits[i].SourceMessageIDs = []string{}
		}
	}
	return hits
}
