package postgres

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/testfiles"
)

// copyTestBatches makes batches of sessions of up to 40 messages from the
// test data's distinct JSON strings (3,000 texts in all) and texts at
// the tsvector's limits, in scope: alternating roles and speakers, some
// with a timestamp (whose date words go into the words column with weight
// B) and a vector, and ids repeated within a batch.
func copyTestBatches(t *testing.T, scope imprint.Scope) []imprint.MessageBatch {
	t.Helper()
	texts := []string{
		"The running runners ran; they run.", "don't won't it's O'Brien's \\ back\\slash",
		"café naïve Ångström straße ΑΒΓ δέλτα Москва", "中文检索 日本語の文章 한국어 텍스트 mixed中文words",
		"May 8th, 2023 may may may 2023", strings.Repeat("may ", 300) + "june",
		strings.Repeat("w ", 17000) + "may 2023 tail", strings.Repeat("alpha may ", 9000),
	}
	seen := map[string]bool{}
	for _, f := range []string{"locomo/locomo-2conv.json", "tau-bench/airline-40.json", "claude-code/session_b.jsonl"} {
		data, err := os.ReadFile(filepath.Join(testfiles.Dir(), f))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range strings.Split(string(data), `"`) {
			if len(s) > 3 && !seen[s] && len(texts) < 3000 {
				seen[s] = true
				texts = append(texts, s)
			}
		}
	}
	rec := imprint.At(time.Date(2026, 12, 2, 3, 0, 0, 123456789, time.UTC))
	var out []imprint.MessageBatch
	for i, s := range texts {
		if i%40 == 0 {
			out = append(out, imprint.MessageBatch{Scope: scope, SessionID: "s" + itoa(i/40), MarkDueAt: 3})
		}
		b := &out[len(out)-1]
		m := imprint.Message{ID: "m" + itoa(i), Role: imprint.RoleUser, Content: s, Speaker: "Alice", RecordedAt: rec}
		if i%2 == 1 {
			m.Role, m.Speaker = imprint.RoleAssistant, "Bob the "+itoa(i%7)
		}
		if i%3 != 0 {
			m.Timestamp = imprint.At(time.Date(2023, time.Month(1+i%12), 1+i%28, 8, 30, 0, 999, time.FixedZone("x", 3600)))
		}
		if i%5 != 0 {
			m.Vec, m.Embedder = []float32{float32(i), -1.5, 1e-20}, "hash"
		}
		if i%40 == 17 {
			m.Workspace = "ws"
		}
		b.Messages = append(b.Messages, m)
		if i%40 == 20 {
			b.Messages = append(b.Messages, m) // the same id again
		}
	}
	return out
}

// TestCopyMessagesLikeInserts records the same messages of new sessions
// with a COPY (the default) and with INSERTs (noCopy) into two scopes and
// checks every column and result is the same: the binary tsvectors are
// the ones setweight(…, 'A') || setweight(…, 'B') makes on the server.
func TestCopyMessagesLikeInserts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	copied := imprint.Scope{Tenant: "t", User: "u", Agent: "copy"}
	inserted := imprint.Scope{Tenant: "t", User: "u", Agent: "insert"}
	got, err := db.AppendMessageBatches(ctx, copyTestBatches(t, copied))
	if err != nil {
		t.Fatal(err)
	}
	db.noCopy = true
	want, err := db.AppendMessageBatches(ctx, copyTestBatches(t, inserted))
	if err != nil {
		t.Fatal(err)
	}
	db.noCopy = false
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !reflect.DeepEqual(g.Inserted, w.Inserted) || !reflect.DeepEqual(g.Duplicates, w.Duplicates) {
			t.Errorf("batch %d: inserted %d, duplicates %v; want %d, %v", i, len(g.Inserted), g.Duplicates, len(w.Inserted), w.Duplicates)
		}
		gs, ws := g.Session, w.Session
		if gs.RoundsSinceExtraction != ws.RoundsSinceExtraction || gs.ExtractionDue != ws.ExtractionDue || gs.Workspace != ws.Workspace {
			t.Errorf("batch %d: session %+v, want %+v", i, gs, ws)
		}
	}
	var n, same int
	if err := db.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE
		a.workspace = b.workspace AND a.role = b.role AND a.content = b.content AND a.ts IS NOT DISTINCT FROM b.ts
		AND a.recorded_at = b.recorded_at AND a.speaker = b.speaker AND a.vec IS NOT DISTINCT FROM b.vec
		AND a.embedder = b.embedder AND a.dim = b.dim AND a.words::text = b.words::text AND a.who::text = b.who::text
		AND a.cjk = b.cjk AND a.ntok = b.ntok AND a.rank = b.rank)
		FROM (SELECT *, rank() OVER (PARTITION BY session_id ORDER BY seq) FROM messages WHERE agent = 'copy') a
		FULL JOIN (SELECT *, rank() OVER (PARTITION BY session_id ORDER BY seq) FROM messages WHERE agent = 'insert') b
		ON a.session_id = b.session_id AND a.id = b.id`).Scan(&n, &same); err != nil {
		t.Fatal(err)
	}
	if n < 1000 || same != n {
		t.Errorf("%d of %d messages recorded alike", same, n)
		rows, err := db.pool.Query(ctx, `SELECT a.id, a.words::text, b.words::text, a.who::text, b.who::text
			FROM messages a JOIN messages b ON a.session_id = b.session_id AND a.id = b.id
			WHERE a.agent = 'copy' AND b.agent = 'insert' AND (a.words::text <> b.words::text OR a.who::text <> b.who::text) LIMIT 3`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, aw, bw, ah, bh string
			if err := rows.Scan(&id, &aw, &bw, &ah, &bh); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: words\n%.300s\nwant\n%.300s\nwho %q want %q", id, aw, bw, ah, bh)
		}
		rows.Close()
	}
	// The same batches again: every message a duplicate.
	again, err := db.AppendMessageBatches(ctx, copyTestBatches(t, copied))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range again {
		if len(r.Inserted) != 0 {
			t.Errorf("batch %d again: %d inserted", i, len(r.Inserted))
		}
	}
}

// copyTestCaptures makes captures of up to 12 traces from texts, in scope:
// every column of a trace set on some of them.
func copyTestCaptures(texts []string, scope imprint.Scope) ([]imprint.Episode, [][]imprint.Trace) {
	var eps []imprint.Episode
	var traces [][]imprint.Trace
	at := imprint.At(time.Date(2026, 12, 2, 3, 0, 0, 123456789, time.UTC))
	for i, s := range texts {
		if i%12 == 0 {
			eps = append(eps, imprint.Episode{ID: scope.Agent + "-ep" + itoa(i/12), SessionID: "s" + itoa(i/40), Scope: scope,
				Status: imprint.EpisodeFinalized, StartedAt: at, EndedAt: at})
			traces = append(traces, nil)
		}
		t := imprint.Trace{ID: scope.Agent + "-tr" + itoa(i), StepKey: "k" + itoa(i), StepIndex: i % 12, UserText: s,
			AgentText: "reply to " + itoa(i), Alpha: float64(i) / 7, Value: -float64(i), Priority: 0.5, Depth: i % 3,
			Usable: i%2 == 0, IsSubagent: i%3 == 0, Truncated: i%4 == 0, CreatedAt: at}
		if i%3 != 0 {
			t.TS = imprint.At(time.Date(2023, 5, 1+i%28, 8, 30, 0, 999, time.FixedZone("x", 3600)))
			t.ToolCalls = []imprint.ToolCall{{Name: "search_flights", Input: []byte(`{"q":"` + itoa(i) + `"}`)}}
		}
		if i%5 != 0 {
			r, h := "reflect on "+s, float64(i%2)
			t.Reflection, t.RHuman, t.ReflectionSource = &r, &h, imprint.ReflectionSource("heuristic")
			t.VecSummary, t.VecAction, t.Embedder = []float32{float32(i), 2}, []float32{-1, 1e-20}, "hash"
		}
		traces[len(traces)-1] = append(traces[len(traces)-1], t)
	}
	return eps, traces
}

// TestCopyTracesLikeInserts writes the same new captures with a COPY of
// their traces (the default) and with INSERTs (noCopy) into two scopes
// and checks every column of the traces is the same.
func TestCopyTracesLikeInserts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	var texts []string
	for _, b := range copyTestBatches(t, imprint.Scope{Tenant: "t", User: "u", Agent: "x"})[:30] {
		for _, m := range b.Messages {
			texts = append(texts, m.Content)
		}
	}
	eps, trs := copyTestCaptures(texts, imprint.Scope{Tenant: "t", User: "u", Agent: "copy"})
	if err := db.SaveCaptures(ctx, eps, trs); err != nil {
		t.Fatal(err)
	}
	db.noCopy = true
	eps, trs = copyTestCaptures(texts, imprint.Scope{Tenant: "t", User: "u", Agent: "insert"})
	if err := db.SaveCaptures(ctx, eps, trs); err != nil {
		t.Fatal(err)
	}
	db.noCopy = false
	var n, same int
	if err := db.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE
		a.workspace = b.workspace AND a.session_id = b.session_id AND a.step_index = b.step_index
		AND a.ts IS NOT DISTINCT FROM b.ts AND a.user_text = b.user_text AND a.agent_text = b.agent_text
		AND a.tool_calls = b.tool_calls AND a.reflection IS NOT DISTINCT FROM b.reflection
		AND a.reflection_source = b.reflection_source AND a.alpha = b.alpha AND a.usable = b.usable
		AND a.value = b.value AND a.priority = b.priority AND a.r_human IS NOT DISTINCT FROM b.r_human
		AND a.depth = b.depth AND a.is_subagent = b.is_subagent AND a.truncated = b.truncated
		AND a.vec_summary IS NOT DISTINCT FROM b.vec_summary AND a.vec_action IS NOT DISTINCT FROM b.vec_action
		AND a.embedder = b.embedder AND a.dim = b.dim AND a.words::text = b.words::text AND a.cjk = b.cjk
		AND a.ntok = b.ntok AND a.created_at = b.created_at AND a.rank = b.rank
		AND split_part(a.episode_id, '-', 2) = split_part(b.episode_id, '-', 2))
		FROM (SELECT *, rank() OVER (ORDER BY rid) FROM traces WHERE agent = 'copy') a
		FULL JOIN (SELECT *, rank() OVER (ORDER BY rid) FROM traces WHERE agent = 'insert') b
		ON a.step_key = b.step_key`).Scan(&n, &same); err != nil {
		t.Fatal(err)
	}
	if n < 1000 || same != n {
		t.Errorf("%d of %d traces written alike", same, n)
	}
}
