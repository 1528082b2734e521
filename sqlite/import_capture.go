package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

var _ imprint.CaptureSaver = (*DB)(nil)

// SupportsCaptureSaver implements imprint.CaptureSaver: always true.
func (db *DB) SupportsCaptureSaver() bool { return true }

// SaveCaptures writes several episodes with their traces, traces[i] being
// those of eps[i], in one transaction: each as SaveCapture writes it (the
// same statements, in order), so that an import of many small episodes
// pays for one commit instead of one each. Nothing is written when one of
// them is invalid (ErrInvalid naming it, e.g. captures[2]: traces[0].id is
// required) or conflicts (ErrConflict).
func (db *DB) SaveCaptures(ctx context.Context, eps []imprint.Episode, traces [][]imprint.Trace) error {
	eps, allKeys, err := imprint.CheckCaptures(eps, traces)
	if err != nil {
		return err
	}
	return dbErr("save captures", db.writeCaptures(ctx, eps, traces, allKeys, func(c int, err error) error {
		return fmt.Errorf("captures[%d]: %w", c, err)
	}))
}

// writeCaptures writes validated captures in one transaction and, after
// the commit, brings the loaded vector indexes up to date. wrap names a
// failing capture in the error.
func (db *DB) writeCaptures(ctx context.Context, eps []imprint.Episode, traces [][]imprint.Trace, keys []map[string]bool,
	wrap func(c int, err error) error) error {
	now := imprint.Now()
	type applied struct {
		rid int64
		t   imprint.Trace
	}
	var written []applied
	var removed []int64
	// The JSON, vectors and index text of every row are encoded before
	// the transaction: the single writer holds its lock for the SQL only.
	encs := make([]captureRows, len(eps))
	for c := range eps {
		var err error
		if encs[c], err = encodeCapture(eps[c], traces[c]); err != nil {
			return wrap(c, err)
		}
	}
	return db.writeTx(ctx, func(tx *sql.Tx) (func(), error) {
		written, removed = written[:0], removed[:0]
		fts, err := db.newFTSWriter(ctx, tx, "trace")
		if err != nil {
			return nil, err
		}
		defer fts.close()
		for c := range eps {
			if err := db.saveCaptureTx(ctx, tx, fts, eps[c], traces[c], encs[c], keys[c], now, func(rid int64, t imprint.Trace) {
				written = append(written, applied{rid, t})
			}, func(rid int64) { removed = append(removed, rid) }); err != nil {
				return nil, wrap(c, err)
			}
		}
		return func() {
			for _, rid := range removed {
				db.vecRemove(imprint.KindTrace, rid)
			}
			for _, a := range written {
				db.vecRemove(imprint.KindTrace, a.rid)
				if a.t.Embedder != "" {
					db.vecUpsert(imprint.KindTrace, a.t.Embedder, a.rid, a.t.ID, a.t.Scope, a.t.SessionID, a.t.Workspace, true,
						a.t.VecSummary, a.t.VecAction)
				}
			}
		}, nil
	})
}

// captureRows are the encoded columns of a capture: its episode's JSON and,
// for each trace, its tool calls as JSON, its vectors as blobs and its
// keyword index text.
type captureRows struct {
	ep     episodeJSON
	traces []traceRow
}

type traceRow struct {
	tools    string
	sum, act []byte
	text     string
}

// encodeCapture encodes the columns of ep and its traces.
func encodeCapture(ep imprint.Episode, traces []imprint.Trace) (captureRows, error) {
	var out captureRows
	var err error
	if out.ep, err = encodeEpisode(ep); err != nil {
		return out, err
	}
	out.traces = make([]traceRow, len(traces))
	for i, t := range traces {
		tools := t.ToolCalls
		if tools == nil {
			tools = []imprint.ToolCall{}
		}
		if out.traces[i].tools, err = jsonText(tools); err != nil {
			return out, err
		}
		out.traces[i].sum, out.traces[i].act = blobOrNil(t.VecSummary), blobOrNil(t.VecAction)
		out.traces[i].text = imprint.TraceText(t)
	}
	return out, nil
}

// saveCaptureTx is SaveCapture's transaction body for one episode; enc
// holds its encoded columns and keys the step keys of traces. It reports
// each trace written and each vanished trace removed; fts is the
// transaction's trace index writer.
func (db *DB) saveCaptureTx(ctx context.Context, tx *sql.Tx, fts *ftsWriter, ep imprint.Episode, traces []imprint.Trace, enc captureRows,
	keys map[string]bool, now imprint.Time, wrote func(rid int64, t imprint.Trace), removedRID func(rid int64)) error {
	if err := db.writeEpisode(ctx, tx, ep, enc.ep, true); err != nil {
		return err
	}
	existing := map[string]int64{}
	sel, err := db.stmt(ctx, tx, traceStepsSQL)
	if err != nil {
		return err
	}
	rows, err := sel.QueryContext(ctx, ep.ID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var rid int64
		var key string
		if err := rows.Scan(&rid, &key); err != nil {
			rows.Close()
			return err
		}
		existing[key] = rid
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// Vanished steps go first, so a surviving step may take over an id.
	for key, rid := range existing {
		if keys[key] {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM traces WHERE rid = ?`, rid); err != nil {
			return err
		}
		if err := fts.remove(rid); err != nil {
			return err
		}
		removedRID(rid)
	}
	for i, t := range traces {
		t.EpisodeID, t.SessionID, t.Scope, t.Workspace = ep.ID, ep.SessionID, ep.Scope, ep.Workspace
		if t.CreatedAt.IsZero() {
			t.CreatedAt = now
		}
		row := enc.traces[i]
		var err error
		var refl any
		if t.Reflection != nil {
			refl = *t.Reflection
		}
		var rh any
		if t.RHuman != nil {
			rh = *t.RHuman
		}
		dim := max(len(t.VecSummary), len(t.VecAction))
		vals := []any{t.ID, t.Scope.Tenant, t.Scope.User, t.Scope.Agent, t.Workspace, t.SessionID, t.StepIndex,
			ts(t.TS), t.UserText, t.AgentText, row.tools, refl, string(t.ReflectionSource), t.Alpha, boolInt(t.Usable),
			t.Value, t.Priority, rh, t.Depth, boolInt(t.IsSubagent), boolInt(t.Truncated),
			row.sum, row.act, t.Embedder, dim}
		rid, ok := existing[t.StepKey]
		if ok {
			// A re-capture rewrites what capture computes and keeps what
			// later stages learned: value, priority and r_human.
			upd := append(append(append([]any{}, vals[:15]...), vals[18:]...), rid)
			var st *sql.Stmt
			if st, err = db.stmt(ctx, tx, traceUpdateSQL); err == nil {
				_, err = st.ExecContext(ctx, upd...)
			}
			if err == nil {
				err = fts.replace(rid, row.text)
			}
		} else {
			var r sql.Result
			var st *sql.Stmt
			if st, err = db.stmt(ctx, tx, traceInsertSQL); err == nil {
				r, err = st.ExecContext(ctx, append(vals, ep.ID, t.StepKey, ts(t.CreatedAt))...)
			}
			if err == nil {
				rid, err = r.LastInsertId()
			}
			if err == nil {
				err = fts.insert(rid, row.text)
			}
		}
		if isUnique(err) {
			return imprint.Conflictf("trace id %q belongs to another step or episode", t.ID)
		}
		if err != nil {
			return err
		}
		wrote(rid, t)
	}
	return nil
}
