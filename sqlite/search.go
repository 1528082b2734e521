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

// SearchText finds records of q.Kind matching any term of q.Text within the
// scope, ranked by BM25 (reported as -bm25, higher is better), best first.
// Hits of the trigram and bigram indexes are merged by summing scores. A
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
	type scored struct {
		hit imprint.Hit
		rid int64
	}
	merged := map[int64]*scored{}
	for _, part := range []struct{ table, expr string }{
		{string(q.Kind) + "_fts", fq.trigram}, {string(q.Kind) + "_bigram", fq.bigram},
	} {
		if part.expr == "" {
			continue
		}
		query := `SELECT ` + src.cols + `, bm25(` + part.table + `) FROM ` + part.table + ` CROSS JOIN ` + src.table +
			` x ON x.` + src.key + ` = ` + part.table + `.rowid WHERE ` + part.table + ` MATCH ? AND ` + scopeWhere("x") + src.live
		args := append([]any{part.expr}, scopeArgs(q.Scope)...)
		if q.SessionID != "" {
			query += ` AND x.session_id = ?`
			args = append(args, q.SessionID)
		}
		if len(q.ExcludeIDs) > 0 {
			query += ` AND x.id NOT IN (` + placeholders(len(q.ExcludeIDs)) + `)`
			for _, id := range q.ExcludeIDs {
				args = append(args, id)
			}
		}
		// Fetch more than the limit from each index so a record ranked
		// lower in both can still win after the merge.
		query += ` ORDER BY bm25(` + part.table + `) LIMIT ?`
		args = append(args, 2*limit)
		rows, err := db.r.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, dbErr("search text", err)
		}
		for rows.Next() {
			var bm float64
			rid, h, err := scanHit(q.Kind, rows, &bm)
			if err != nil {
				rows.Close()
				return nil, dbErr("search text", err)
			}
			if s, ok := merged[rid]; ok {
				s.hit.Score += -bm
				continue
			}
			h.Score = -bm
			merged[rid] = &scored{hit: h, rid: rid}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, dbErr("search text", err)
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
	rows, err := db.r.QueryContext(ctx, `SELECT `+src.cols+` FROM `+src.table+` x WHERE x.`+src.key+` IN (`+
		placeholders(len(cands))+`) AND `+scopeWhere("x")+src.live, args...)
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
