package sqlite

import (
	"context"
	"database/sql"
	"errors"

	imprint "github.com/imprint-dev/imprint"
)

// The keyword term counts of the dedup recall (imprint.TermCounter).
var _ imprint.TermCounter = (*DB)(nil)

// SupportsTermCounts implements imprint.TermCounter: always true.
func (db *DB) SupportsTermCounts() bool { return true }

// CountTermMatches returns, for each term, how many records of kind in
// scope hold it in the keyword indexes, counting at most limit per term,
// so each count costs at most limit matching index entries of the scope
// (each looked up by key) and never a bm25 pass. Callers use it to prefer
// rare terms when building a query. A term with no searchable token counts
// 0. ErrInvalid for an unknown kind or an incomplete scope.
func (db *DB) CountTermMatches(ctx context.Context, scope imprint.Scope, kind imprint.Kind, terms []string, limit int) ([]int, error) {
	src, err := sourceOf(kind)
	if err != nil {
		return nil, err
	}
	if err := validScope(scope); err != nil {
		return nil, err
	}
	limit = max(limit, 1)
	// When every record of the kind is the scope's (the common case of one
	// user's store), the index entries need no look-up of their rows.
	only, err := db.onlyScope(ctx, src.table, scope)
	if err != nil {
		return nil, dbErr("count term matches", err)
	}
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
			q := `SELECT COUNT(*) FROM (SELECT rowid FROM ` + part.table + ` WHERE ` + part.table + ` MATCH ? LIMIT ?)`
			args := []any{part.expr, limit}
			if !only {
				q = `SELECT COUNT(*) FROM (SELECT 1 FROM (SELECT rowid AS rid
				FROM ` + part.table + ` WHERE ` + part.table + ` MATCH ?) f CROSS JOIN ` + src.table + ` x ON x.` + src.key + ` = f.rid
				WHERE ` + keyedScopeWhere + ` LIMIT ?)`
				args = append(append([]any{part.expr}, scopeArgs(scope)...), limit)
			}
			if err := db.r.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
				return nil, dbErr("count term matches", err)
			}
			out[i] = min(out[i]+n, limit)
		}
	}
	return out, nil
}

// onlyScope reports whether every row of table (memories, traces or
// messages, each indexed by scope first) belongs to scope: its first and
// last rows in scope order are the scope's. An empty table counts as the
// scope's.
func (db *DB) onlyScope(ctx context.Context, table string, scope imprint.Scope) (bool, error) {
	for _, dir := range []string{"ASC", "DESC"} {
		var t, u, a string
		err := db.r.QueryRowContext(ctx, `SELECT tenant, user_id, agent FROM `+table+
			` ORDER BY tenant `+dir+`, user_id `+dir+`, agent `+dir+` LIMIT 1`).Scan(&t, &u, &a)
		if errors.Is(err, sql.ErrNoRows) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if t != scope.Tenant || u != scope.User || a != scope.Agent {
			return false, nil
		}
	}
	return true, nil
}
