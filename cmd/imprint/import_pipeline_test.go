package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/shard"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/ingest"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/sqlite"
)

// importOneByOne imports paths the plain way, in the test's own command
// (so with the App's configuration and pipelines): each transcript read,
// recorded with one Record call and its episodes captured one after
// another, then each session extracted window by window, in order of first
// appearance. It is what the pipelined import must be equal to.
func importOneByOne(t *testing.T, dataDir string, paths ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := newApp(nil, strings.NewReader(""), &stdout, &stderr)
	root := newRootCmd(a)
	root.AddCommand(&cobra.Command{
		Use: "import-one-by-one",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sources, _, err := ingest.CollectSources(args, ingest.FormatAuto)
			if err != nil {
				return err
			}
			rec, err := a.node.Recorder(ctx)
			if err != nil {
				return err
			}
			capRunner, err := a.node.Capture(ctx)
			if err != nil {
				return err
			}
			type sessionOf struct {
				scope imprint.Scope
				id    string
			}
			var sessions []sessionOf
			seen := map[string]bool{}
			for _, src := range sources {
				trs, _, err := src.Read(time.UTC)
				if err != nil {
					return err
				}
				for _, tr := range trs {
					// The scope an import gives the source (agent claude-code
					// for Claude Code, ...).
					scope := a.ScopeFor(src.Format)
					if len(tr.Messages) > 0 {
						if _, err := rec.RecordSession(ctx, scope, record.Session{SessionID: tr.SessionID, Messages: tr.Messages, BetweenPeople: tr.BetweenPeople}); err != nil {
							return err
						}
					}
					for _, ep := range tr.Episodes {
						ep.Scope = scope
						ep.ID = capture.DeriveEpisodeID(ep)
						if _, err := capRunner.Run(ctx, ep, ""); err != nil {
							return err
						}
					}
					if !seen[tr.SessionID] {
						seen[tr.SessionID] = true
						sessions = append(sessions, sessionOf{scope, tr.SessionID})
					}
				}
			}
			r, err := a.node.Extract(ctx)
			if err != nil {
				return err
			}
			for _, s := range sessions {
				if err := r.ExtractPending(ctx, s.scope, s.id, nil); err != nil {
					return fmt.Errorf("extract %s: %w", s.id, err)
				}
			}
			return nil
		},
	})
	root.SetArgs(append([]string{"import-one-by-one", "--data-dir", dataDir}, paths...))
	err := root.ExecuteContext(context.Background())
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("import one by one: %v\n%s", err, stderr.String())
	}
}

// storeView reads what a user gets back from a data folder: messages,
// episodes, traces, memories (live and superseded) and the sessions'
// extraction state, each as sorted text rows. Times set from the clock at
// import (recorded_at, created_at, the timestamp of a message that had
// none) are left out, and so are ids derived from them.
func storeView(t *testing.T, dataDir string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "imprint.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	queries := map[string]string{
		"messages": `SELECT session_id || ' ' || id || ' ' || role || ' ' || content FROM messages`,
		"episodes": `SELECT id || ' ' || session_id || ' ' || status FROM episodes`,
		"traces": `SELECT id || ' ' || episode_id || ' ' || step_key || ' ' || user_text || ' ' || agent_text || ' ' || tool_calls ||
			' ' || COALESCE(reflection, '') || ' ' || alpha || ' ' || usable || ' ' || value FROM traces`,
		"memories": `SELECT session_id || ' ' || content || ' ' || type || ' ' || priority || ' ' || scene_name || ' ' ||
			source_message_ids || ' ' || version || ' ' || (superseded_by IS NULL) || ' ' || extractor FROM memories`,
		"sessions": `SELECT id || ' ' || last_scene_name || ' ' || rounds_since_extraction || ' ' ||
			(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.seq > s.cursor_seq) FROM sessions s`,
	}
	out := map[string][]string{}
	for name, q := range queries {
		rows, err := db.Query(q + ` ORDER BY 1`)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out[name] = append(out[name], s)
		}
		rows.Close()
	}
	return out
}

// TestImportPipelinedLikeOneByOne imports all of the shared test data with
// the pipelined import (sources read ahead, transcripts recorded together,
// capture and extraction alongside) and the plain way, and requires the
// same messages, episodes, traces, memories and session state, and a
// records log that replays to the same live memories.
func TestImportPipelinedLikeOneByOne(t *testing.T) {
	t.Parallel()
	src := testfiles.Dir()
	piped, plain := t.TempDir(), t.TempDir()
	r := runImprint(t, nil, "import", "--json", "--data-dir", piped, src)
	if r.code != 0 {
		t.Fatalf("import exit %d: %s", r.code, r.stderr)
	}
	sum := jsonLines[importOut](t, r)[0]
	importOneByOne(t, plain, src)

	want, got := storeView(t, plain), storeView(t, piped)
	for _, name := range []string{"messages", "episodes", "traces", "memories", "sessions"} {
		if len(want[name]) == 0 {
			t.Errorf("no %s imported one by one", name)
		}
		if diff := cmp.Diff(want[name], got[name]); diff != "" {
			t.Errorf("%s (-one by one +pipelined):\n%s", name, diff)
		}
	}
	if sum.MessagesRecorded != len(got["messages"]) || sum.Traces != len(got["traces"]) || sum.Memories["store"] != len(got["memories"]) {
		t.Errorf("summary %+v does not count what was stored: %d messages, %d traces, %d memories",
			sum, len(got["messages"]), len(got["traces"]), len(got["memories"]))
	}

	// The records log of the pipelined import replays to its live set.
	fresh := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(fresh, "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := extract.ReplayWith(context.Background(), db, shard.Dir(filepath.Join(piped, "records")), nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	live := func(v map[string][]string) []string {
		var out []string
		for _, m := range v["memories"] {
			if strings.Contains(m, " 1 heuristic") {
				out = append(out, m)
			}
		}
		return out
	}
	if diff := cmp.Diff(live(got), live(storeView(t, fresh))); diff != "" {
		t.Errorf("replayed live memories (-imported +replayed):\n%s", diff)
	}

	// Importing again adds nothing.
	again := jsonLines[importOut](t, runImprint(t, nil, "import", "--json", "--data-dir", piped, src))[0]
	if again.MessagesRecorded != 0 || again.Episodes != 0 || again.Memories["store"] != 0 {
		t.Errorf("second import added something: %+v", again)
	}
}

// TestImportInterruptedResumes stops imports of the shared test data at
// different points (the context ends, as on Ctrl-C) and imports again:
// the result is what one uninterrupted import gives, nothing lost and
// nothing twice.
func TestImportInterruptedResumes(t *testing.T) {
	t.Parallel()
	src := testfiles.Dir()
	clean := t.TempDir()
	if r := runImprint(t, nil, "import", "--json", "--data-dir", clean, src); r.code != 0 {
		t.Fatalf("import exit %d: %s", r.code, r.stderr)
	}
	want := storeView(t, clean)
	for _, after := range []time.Duration{40 * time.Millisecond, 120 * time.Millisecond, 250 * time.Millisecond, 450 * time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), after)
			defer cancel()
			var stdout, stderr bytes.Buffer
			env := envMap(map[string]string{"HOME": t.TempDir()})
			code := runEnv(ctx, []string{"import", "--json", "--data-dir", dir, src}, env, strings.NewReader(""), &stdout, &stderr)
			t.Logf("import stopped after %v: exit %d %s", after, code, lastLine(stderr.String()))
			if r := runImprint(t, nil, "import", "--json", "--data-dir", dir, src); r.code != 0 {
				t.Fatalf("resumed import exit %d: %s", r.code, r.stderr)
			}
			got := storeView(t, dir)
			for _, name := range []string{"messages", "episodes", "traces", "memories", "sessions"} {
				if diff := cmp.Diff(want[name], got[name]); diff != "" {
					t.Errorf("%s (-uninterrupted +interrupted and resumed):\n%s", name, diff)
				}
			}
			// The records log still replays to the live memories.
			fresh := t.TempDir()
			db, err := sqlite.Open(context.Background(), filepath.Join(fresh, "imprint.db"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := extract.ReplayWith(context.Background(), db, shard.Dir(filepath.Join(dir, "records")), nil); err != nil {
				t.Fatal(err)
			}
			db.Close()
			live := func(v map[string][]string) []string {
				var out []string
				for _, m := range v["memories"] {
					if strings.Contains(m, " 1 heuristic") {
						out = append(out, m)
					}
				}
				return out
			}
			if diff := cmp.Diff(live(got), live(storeView(t, fresh))); diff != "" {
				t.Errorf("replayed live memories (-imported +replayed):\n%s", diff)
			}
		})
	}
}
