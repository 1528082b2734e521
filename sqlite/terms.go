package sqlite

import (
	"context"

	imprint "github.com/imprint-dev/imprint"
)

// CountTermMatches returns, for each term, how many records of kind hold
// it in the keyword indexes, over all scopes, counting at most limit per
// term, so each count costs at most limit index entries and never a bm25
// pass. Callers use it to prefer rare terms when building a query. A term
// with no searchable token counts 0. ErrInvalid for an unknown kind.
func (db *DB) CountTermMatches(ctx context.Context, kind imprint.Kind, terms []string, limit int) ([]int, error) {
	if _, err := sourceOf(kind); err != nil {
		return nil, err
	}
	limit = max(limit, 1)
	out := make([]int, len(terms))
	for i, t := range terms {
		fq := buildQuery(t)
		for _, part := range []struct{ table, expr string }{
			{string(kind) + "_fts", fq.trigram}, {string(kind) + "_words", fq.words},
		} {
			if part.expr == "" {
				continue
			}
			var n int
			if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT rowid FROM `+part.table+` WHERE `+
				part.table+` MATCH ? LIMIT ?)`, part.expr, limit).Scan(&n); err != nil {
				return nil, dbErr("count term matches", err)
			}
			out[i] = min(out[i]+n, limit)
		}
	}
	return out, nil
}
