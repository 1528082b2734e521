package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"sort"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// defaultSearchLimit is the number of hits when a query gives no limit;
// maxSearchLimit bounds what a caller can ask for.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 1000
)

// hitSource describes how to read hits of one kind: the table, its integer
// key, the columns making a hit, and the liveness filter.
type hitSource struct {
	table, key, cols, live string
}

var hitSources = map[imprint.Kind]hitSource{
	imprint.KindMemory: {"memories", "rid",
		"x.rid, x.id, x.content, '', x.session_id, NULL, x.source_message_ids", " AND x.superseded_by IS NULL"},
	imprint.KindTrace: {"traces", "rid",
		"x.rid, x.id, x.user_text, x.agent_text, x.session_id, x.episode_id, NULL", ""},
	imprint.KindMessage: {"messages", "seq",
		"x.seq, x.id, x.content, '', x.session_id, NULL, NULL", ""},
}

func sourceOf(k imprint.Kind) (hitSource, error) {
	src, ok := hitSources[k]
	if !ok {
		return src, imprint.Invalidf("kind %q is not memory, trace or message", k)
	}
	return src, nil
}

func clampLimit(n int) int {
	switch {
	case n <= 0:
		return defaultSearchLimit
	case n > maxSearchLimit:
		return maxSearchLimit
	}
	return n
}

// scanHit reads the columns of hitSource.cols plus trailing extras.
func scanHit(kind imprint.Kind, rows *sql.Rows, extra ...any) (int64, imprint.Hit, error) {
	var rid int64
	var h imprint.Hit
	var t1, t2, session string
	var episode, src sql.NullString
	dst := append([]any{&rid, &h.ID, &t1, &t2, &session, &episode, &src}, extra...)
	if err := rows.Scan(dst...); err != nil {
		return 0, h, err
	}
	h.Kind = kind
	h.Text = strings.TrimSpace(strings.Join(nonEmpty(t1, t2), "\n"))
	if session != "" {
		h.SessionID = &session
	}
	if episode.Valid {
		h.EpisodeID = &episode.String
	}
	if src.Valid {
		h.SourceMessageIDs = []string{}
		if err := json.Unmarshal([]byte(src.String), &h.SourceMessageIDs); err != nil {
			return 0, h, err
		}
	}
	return rid, h, nil
}

func nonEmpty(ss ...string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

type scored struct {
	hit imprint.Hit
	rid int64
}

// searchIndex returns up to want hits of one index, best first. It ranks
// inside FTS first and reads the rows of only the best candidates; when the
// scope, session or exclusion filters leave too few, it widens the
// candidate window (4x per round) until the index has no more matches.
// Common words then cost one bm25 pass instead of a row lookup per match.
func (db *DB) searchIndex(ctx context.Context, q imprint.TextQuery, src hitSource, table, expr string, want int) ([]scored, error) {
	filter := scopeWhere("x") + src.live
	fargs := scopeArgs(q.Scope)
	if q.SessionID != "" {
		filter += ` AND x.session_id = ?`
		fargs = append(fargs, q.SessionID)
	}
	if len(q.ExcludeIDs) > 0 {
		filter += ` AND x.id NOT IN (` + placeholders(len(q.ExcludeIDs)) + `)`
		for _, id := range q.ExcludeIDs {
			fargs = append(fargs, id)
		}
	}
	for window := max(4*want, 64); ; window *= 4 {
		query := `SELECT ` + src.cols + `, f.score FROM (SELECT rowid AS rid, bm25(` + table + `) AS score
			FROM ` + table + ` WHERE ` + table + ` MATCH ? ORDER BY score LIMIT ?) f
			CROSS JOIN ` + src.table + ` x ON x.` + src.key + ` = f.rid WHERE ` + filter + ` ORDER BY f.score LIMIT ?`
		rows, err := db.r.QueryContext(ctx, query, append(append([]any{expr, window}, fargs...), want)...)
		if err != nil {
			return nil, err
		}
		var out []scored
		for rows.Next() {
			var bm float64
			rid, h, err := scanHit(q.Kind, rows, &bm)
			if err != nil {
				rows.Close()
				return nil, err
			}
			h.Score = -bm
			out = append(out, scored{hit: h, rid: rid})
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
		if len(out) >= want {
			return out, nil
		}
		var more int
		if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT rowid FROM `+table+` WHERE `+table+
			` MATCH ? LIMIT ?)`, expr, window+1).Scan(&more); err != nil {
			return nil, err
		}
		if more <= window {
			return out, nil // the window held every match
		}
	}
}

// SearchText finds records of q.Kind matching any term of q.Text within the
// scope, ranked by BM25 (reported as -bm25, higher is better), best first.
// Hits of the word and trigram indexes are merged by summing scores. A
// query with no usable term returns no hits. ErrInvalid for an empty scope
// or unknown kind.
func (db *DB) SearchText(ctx context.Context, q imprint.TextQuery) ([]imprint.Hit, error) {
	if err := validScope(q.Scope); err != nil {
		return nil, err
	}
	src, err := sourceOf(q.Kind)
	if err != nil {
		return nil, err
	}
	limit := clampLimit(q.Limit)
	fq := buildQuery(q.Text)
	if fq.empty() {
		return []imprint.Hit{}, nil
	}
	merged := map[int64]*scored{}
	for _, part := range []struct{ table, expr string }{
		{string(q.Kind) + "_fts", fq.trigram}, {string(q.Kind) + "_words", fq.words},
	} {
		if part.expr == "" {
			continue
		}
		hits, err := db.searchIndex(ctx, q, src, part.table, part.expr, 2*limit)
		if err != nil {
			return nil, dbErr("search text", err)
		}
		for _, h := range hits {
			if s, ok := merged[h.rid]; ok {
				s.hit.Score += h.hit.Score
				continue
			}
			merged[h.rid] = &scored{hit: h.hit, rid: h.rid}
		}
	}
	all := make([]*scored, 0, len(merged))
	for _, s := range merged {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].hit.Score != all[j].hit.Score {
			return all[i].hit.Score > all[j].hit.Score
		}
		return all[i].rid < all[j].rid
	})
	out := make([]imprint.Hit, 0, min(limit, len(all)))
	for _, s := range all {
		if len(out) == limit {
			break
		}
		out = append(out, s.hit)
	}
	return out, nil
}

// SearchVector finds the records of q.Kind whose vector made by q.Embedder
// is closest to q.Vector by cosine, within the scope (and session), best
// first. Superseded memories are never candidates; a trace scores the better
// of its summary and action vectors. A query vector of another dimension
// matches nothing. ErrInvalid for an empty scope, unknown kind or missing
// embedder.
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
	x, err := db.index(ctx, vecKey{q.Kind, q.Embedder})
	if err != nil {
		return nil, dbErr("search vector", err)
	}
	cands := x.topK(q, clampLimit(q.Limit))
	if len(cands) == 0 {
		return []imprint.Hit{}, nil
	}
	args := make([]any, 0, len(cands)+3)
	for _, c := range cands {
		args = append(args, c.rid)
	}
	args = append(args, scopeArgs(q.Scope)...)
	// The unary + keeps SQLite from reading the scope index (every row of
	// the scope) instead of looking the candidates up by key.
	rows, err := db.r.QueryContext(ctx, `SELECT `+src.cols+` FROM `+src.table+` x WHERE x.`+src.key+` IN (`+
		placeholders(len(cands))+`) AND +x.tenant = ? AND +x.user_id = ? AND +x.agent = ?`+src.live, args...)
	if err != nil {
		return nil, dbErr("search vector", err)
	}
	defer rows.Close()
	byRID := map[int64]imprint.Hit{}
	for rows.Next() {
		rid, h, err := scanHit(q.Kind, rows)
		if err != nil {
			return nil, dbErr("search vector", err)
		}
		byRID[rid] = h
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("search vector", err)
	}
	out := make([]imprint.Hit, 0, len(cands))
	for _, c := range cands {
		h, ok := byRID[c.rid]
		if !ok {
			continue // changed since the scan
		}
		h.Score = c.score
		out = append(out, h)
	}
	return out, nil
}
