package postgres

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	imprint "github.com/imprint-dev/imprint"
)

// vecCols names the vector columns of each kind (a trace has two and
// scores the better).
var vecCols = map[imprint.Kind][]string{
	imprint.KindMemory:  {"vec"},
	imprint.KindTrace:   {"vec_summary", "vec_action"},
	imprint.KindMessage: {"vec"},
}

// cosine is the cosine similarity of a and b (0 when either is zero).
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// SearchVector finds the records of q.Kind whose vector made by q.Embedder
// is closest to q.Vector by cosine, within the scope (and session), best
// first: an exact scan of the scope's vectors of that embedder and
// dimension, read by the scope's index. Superseded memories are never
// candidates; a trace scores the better of its summary and action
// vectors. A query vector of another dimension matches nothing.
// ErrInvalid for an empty scope, unknown kind or missing embedder.
func (db *DB) SearchVector(ctx context.Context, q imprint.VectorQuery) ([]imprint.Hit, error) {
	if err := validScope(q.Scope); err != nil {
		return nil, err
	}
	src, err := sourceOf(q.Kind)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(q.Embedder) == "" {
		return nil, imprint.Invalidf("embedder is required")
	}
	if len(q.Vector) == 0 {
		return []imprint.Hit{}, nil
	}
	limit := imprint.SearchLimit(q.Limit)
	cols := vecCols[q.Kind]
	var a args
	// The embedder and dimension are literals, so that the planner can
	// use the partial HNSW index of the (embedder, dimension).
	filter := hitFilter(&a, q.Scope, q.SessionID, q.Workspace, q.IncludeGlobal, q.ExcludeIDs, src) +
		` AND x.embedder = ` + quoteLiteral(q.Embedder) + ` AND x.dim = ` + strconv.Itoa(len(q.Vector))
	sel := `SELECT ` + src.cols + `, x.` + strings.Join(cols, ", x.") + ` FROM ` + src.table + ` x WHERE ` + filter
	var out []scored
	read := func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
			vecs := make([][]float32, len(cols))
			dst := make([]any, len(cols))
			for i := range vecs {
				dst[i] = &vecs[i]
			}
			rid, h, err := scanHit(q.Kind, rows, dst...)
			if err != nil {
				return err
			}
			best, ok := 0.0, false
			for _, v := range vecs {
				if len(v) != len(q.Vector) {
					continue
				}
				if s := cosine(q.Vector, v); !ok || s > best {
					best, ok = s, true
				}
			}
			if !ok || q.MinScore != 0 && best < q.MinScore {
				continue
			}
			h.Score = best
			out = append(out, scored{hit: h, rid: rid})
		}
		return rows.Err()
	}
	if db.vec.version == "" {
		// Exact: every vector of the scope, embedder and dimension.
		var has []string
		for _, c := range cols {
			has = append(has, `x.`+c+` IS NOT NULL`)
		}
		rows, err := db.pool.Query(ctx, sel+` AND (`+strings.Join(has, " OR ")+`)`, a...)
		if err != nil {
			return nil, dbErr("search vector", err)
		}
		if err := read(rows); err != nil {
			return nil, dbErr("search vector", err)
		}
	} else if err := db.searchHNSW(ctx, q, src.table, cols, sel, a, limit, read); err != nil {
		return nil, dbErr("search vector", err)
	}
	seen := map[int64]bool{}
	uniq := out[:0]
	for _, s := range out {
		if !seen[s.rid] {
			seen[s.rid] = true
			uniq = append(uniq, s)
		}
	}
	out = uniq
	sort.Slice(out, func(i, j int) bool {
		if out[i].hit.Score != out[j].hit.Score {
			return out[i].hit.Score > out[j].hit.Score
		}
		return out[i].rid < out[j].rid
	})
	hits := make([]imprint.Hit, 0, min(limit, len(out)))
	for _, s := range out[:min(limit, len(out))] {
		hits = append(hits, s.hit)
	}
	return hits, nil
}
