package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/internal/clitext"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// runImprintApp runs imprint in-process like runImprint, after configure
// has adjusted the App (for what the environment cannot set).
func runImprintApp(t *testing.T, configure func(*App), env map[string]string, args ...string) result {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = t.TempDir()
	}
	var stdout, stderr bytes.Buffer
	a := newApp(envMap(env), strings.NewReader(""), &stdout, &stderr)
	configure(a)
	root := newRootCmd(a)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if cerr := a.Close(); cerr != nil && err == nil {
		err = cerr
	}
	code := clitext.WriteError(&stderr, err, a.JSON, !a.started)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// importSum is the import summary with the counts importOut leaves out.
type importSum struct {
	importOut
	EpisodesUnchanged int `json:"episodes_unchanged"`
	CompletionTokens  int `json:"completion_tokens"`
}

// importJSON runs imprint import --json with args and returns its summary;
// a non-zero exit fails the test.
func importJSON(t *testing.T, env map[string]string, args ...string) importSum {
	t.Helper()
	return importJSONAs[importSum](t, env, args...)
}

// importJSONAs is importJSON decoding the summary into T.
func importJSONAs[T any](t *testing.T, env map[string]string, args ...string) T {
	t.Helper()
	r := runImprint(t, env, append([]string{"import", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("import %v: exit %d: %s", args, r.code, r.stderr)
	}
	return jsonLines[T](t, r)[0]
}

// TestImportImprintFormatSkipsBadLine imports imprint's own JSONL with a
// malformed line and an invalid episode among good ones: both are reported
// with file and line, the good episodes are imported, alone and beside
// another file.
func TestImportImprintFormatSkipsBadLine(t *testing.T) {
	t.Parallel()
	ep := func(n int) string {
		return fmt.Sprintf(`{"session_id":"trip","turns":[{"role":"user","content":"Book flight number %d to Lisbon please","ts":"2026-05-01T10:0%d:00Z"},`+
			`{"role":"assistant","content":"Booked flight %d to Lisbon."}]}`, n, n, n)
	}
	lines := []string{ep(1), `{"session_id":"trip","turns":[{"role":"user","content":"cut off`, ep(3),
		`{"session_id":"trip","turns":[{"role":"bot","content":"x"}]}`, ep(5)}
	file := writeTemp(t, "episodes.jsonl", strings.Join(lines, "\n")+"\n")
	for _, tt := range []struct {
		name  string
		paths []string
	}{
		{"one file", []string{file}},
		{"beside another file", []string{file, repoFile(t, "examples/conversation.json")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sum := importJSON(t, nil, append([]string{"--format", "imprint", "--data-dir", dir}, tt.paths...)...)
			warned := map[int]string{}
			for _, w := range sum.Warnings {
				if fmt.Sprint(w["file"]) == file {
					line, _ := w["line"].(float64)
					warned[int(line)] = fmt.Sprint(w["message"])
				}
			}
			if !strings.Contains(warned[2], "malformed JSON") || !strings.Contains(warned[4], `unknown role "bot"`) || len(warned) != 2 {
				t.Errorf("warnings for %s: %v; want line 2 (malformed JSON) and line 4 (unknown role)", file, warned)
			}
			var got []string
			for _, m := range storeView(t, dir)["messages"] {
				if _, text, ok := strings.Cut(m, " user Book "); ok && strings.HasPrefix(m, "trip ") {
					got = append(got, text)
				}
			}
			slices.Sort(got)
			var want []string
			for _, n := range []int{1, 3, 5} {
				want = append(want, fmt.Sprintf("flight number %d to Lisbon please", n))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("imported messages of the good lines (-want +got):\n%s", diff)
			}
			if sum.Episodes < 3 || sum.Traces < 3 {
				t.Errorf("episodes of the good lines not captured: %+v", sum)
			}
		})
	}
}

// TestImportGrownTranscriptAddsOnlyNew imports the first lines of a real
// Claude Code transcript, then the whole of it once it has grown: the
// second import adds only the new messages and the new or grown episodes,
// and the data folder ends up as one import of the whole transcript gives.
func TestImportGrownTranscriptAddsOnlyNew(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(sharedFile(t, "claude-code/representative_messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(whole, src, 0o644); err != nil {
		t.Fatal(err)
	}
	fullDir := t.TempDir()
	full := importJSON(t, nil, "--data-dir", fullDir, whole)
	want, wantTurns := storeView(t, fullDir), episodeTurns(t, fullDir)
	if full.MessagesRecorded < 5 || full.Episodes < 3 {
		t.Fatalf("full import %+v", full)
	}
	lines := strings.SplitAfter(string(src), "\n")
	// Cut after a finished exchange, inside a tool call, and before the
	// last user message.
	for _, n := range []int{2, 4, 8, 10} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := filepath.Join(t.TempDir(), "session.jsonl")
			if err := os.WriteFile(file, []byte(strings.Join(lines[:n], "")), 0o644); err != nil {
				t.Fatal(err)
			}
			first := importJSON(t, nil, "--data-dir", dir, file)
			before, beforeTurns := storeView(t, dir), episodeTurns(t, dir)
			f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(strings.Join(lines[n:], "")); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			second := importJSON(t, nil, "--data-dir", dir, file)
			got := storeView(t, dir)
			if second.MessagesRecorded != len(got["messages"])-len(before["messages"]) || second.MessagesRecorded != full.MessagesRecorded-first.MessagesRecorded {
				t.Errorf("second import recorded %d messages; %d were new (first import %d, whole %d)",
					second.MessagesRecorded, len(got["messages"])-len(before["messages"]), first.MessagesRecorded, full.MessagesRecorded)
			}
			if second.MessagesSkipped != first.MessagesRecorded+first.MessagesSkipped {
				t.Errorf("second import skipped %d messages, want the %d of the first import", second.MessagesSkipped, first.MessagesRecorded+first.MessagesSkipped)
			}
			// Episodes the first import captured whole are not captured again.
			unchanged := 0
			for id, n := range beforeTurns {
				if wantTurns[id] == n {
					unchanged++
				}
			}
			if second.EpisodesUnchanged != unchanged || second.Episodes != len(want["episodes"])-unchanged {
				t.Errorf("second import: %d episodes captured, %d unchanged; want %d and %d", second.Episodes, second.EpisodesUnchanged,
					len(want["episodes"])-unchanged, unchanged)
			}
			for _, name := range []string{"messages", "episodes", "traces", "memories", "sessions"} {
				if diff := cmp.Diff(want[name], got[name]); diff != "" {
					t.Errorf("%s (-one import of the whole +first %d lines then the rest):\n%s", name, n, diff)
				}
			}
			// And a third import adds nothing.
			third := importJSON(t, nil, "--data-dir", dir, file)
			if third.MessagesRecorded != 0 || third.Episodes != 0 || third.Traces != 0 || third.Memories["store"] != 0 {
				t.Errorf("third import added something: %+v", third)
			}
		})
	}
}

// episodeTurns returns the number of turns of each stored episode.
func episodeTurns(t *testing.T, dataDir string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "imprint.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, json_array_length(turns) FROM episodes`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportNoCaptureNoExtract imports the examples with --no-capture
// (messages and memories, no traces) and with --no-extract (messages and
// traces, no memories, messages left pending); a plain import afterwards
// does what was left out, ending where one plain import ends.
func TestImportNoCaptureNoExtract(t *testing.T) {
	t.Parallel()
	paths := []string{repoFile(t, "examples/conversation.json"), repoFile(t, "examples/claude-code/session.jsonl")}
	plainDir := t.TempDir()
	plain := importJSON(t, nil, append([]string{"--data-dir", plainDir}, paths...)...)
	want := storeView(t, plainDir)
	if plain.Traces == 0 || plain.Memories["store"] == 0 {
		t.Fatalf("plain import %+v", plain)
	}
	tests := []struct {
		flag string
		// empty is the part of the store the flag leaves empty; full, one
		// it still fills.
		empty, full string
	}{
		{"--no-capture", "traces", "memories"},
		{"--no-extract", "memories", "traces"},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sum := importJSON(t, nil, append([]string{tt.flag, "--data-dir", dir}, paths...)...)
			got := storeView(t, dir)
			if sum.MessagesRecorded != plain.MessagesRecorded || len(got["messages"]) != len(want["messages"]) {
				t.Errorf("%s recorded %d messages (%d stored), want %d", tt.flag, sum.MessagesRecorded, len(got["messages"]), plain.MessagesRecorded)
			}
			if len(got[tt.empty]) != 0 {
				t.Errorf("%s stored %d %s", tt.flag, len(got[tt.empty]), tt.empty)
			}
			if len(got[tt.full]) != len(want[tt.full]) {
				t.Errorf("%s stored %d %s, want %d", tt.flag, len(got[tt.full]), tt.full, len(want[tt.full]))
			}
			switch tt.flag {
			case "--no-capture":
				if sum.Traces != 0 || sum.Episodes != 0 || len(got["episodes"]) != 0 {
					t.Errorf("--no-capture captured: %+v, %d episodes stored", sum, len(got["episodes"]))
				}
				if sum.Memories["store"] != plain.Memories["store"] {
					t.Errorf("--no-capture stored %d memories, want %d", sum.Memories["store"], plain.Memories["store"])
				}
			case "--no-extract":
				if sum.Memories["store"] != 0 || sum.Traces != plain.Traces {
					t.Errorf("--no-extract: %d memories, %d traces; want 0 and %d", sum.Memories["store"], sum.Traces, plain.Traces)
				}
				if diff := cmp.Diff(want["sessions"], got["sessions"]); diff == "" {
					t.Errorf("--no-extract left no message pending: sessions %v", got["sessions"])
				}
			}
			// A plain import afterwards does what was left out.
			importJSON(t, nil, append([]string{"--data-dir", dir}, paths...)...)
			after := storeView(t, dir)
			for _, name := range []string{"messages", "episodes", "traces", "memories", "sessions"} {
				if diff := cmp.Diff(want[name], after[name]); diff != "" {
					t.Errorf("%s after %s then a plain import (-one plain import +got):\n%s", name, tt.flag, diff)
				}
			}
		})
	}
}

// barRe matches the counts the progress bar shows.
var barRe = regexp.MustCompile(`files (\d+)/(\d+) · messages (\d+) · episodes (\d+) · memories (\d+)`)

// TestImportProgressBar: with stderr a terminal the import draws a bar of
// files, messages, episodes and memories there, never on stdout; with
// stderr a plain file or buffer it draws none.
func TestImportProgressBar(t *testing.T) {
	t.Parallel()
	paths := []string{repoFile(t, "examples/conversation.json"), repoFile(t, "examples/claude-code/session.jsonl")}
	for _, terminal := range []bool{true, false} {
		t.Run(fmt.Sprintf("terminal=%v", terminal), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var asked []io.Writer
			var mu sync.Mutex
			r := runImprintApp(t, func(a *App) {
				if !terminal {
					return // the real check: a bytes.Buffer is no terminal
				}
				a.isTerminal = func(w io.Writer) bool {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, w)
					return true
				}
			}, nil, append([]string{"import", "--json", "--data-dir", dir}, paths...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			sum := jsonLines[importOut](t, r)[0]
			shown := barRe.FindAllStringSubmatch(r.stderr, -1)
			if !terminal {
				if len(shown) != 0 || strings.Contains(r.stderr, "\r") {
					t.Fatalf("no terminal, but a progress bar on stderr: %q", r.stderr)
				}
				return
			}
			if len(asked) != 1 {
				t.Errorf("terminal check asked %d times, want once (of stderr)", len(asked))
			}
			if len(shown) == 0 {
				t.Fatalf("no progress bar on the terminal: %q", r.stderr)
			}
			// The bar counts up to what the summary reports.
			final := []int{len(paths), len(paths), sum.MessagesRecorded, sum.Episodes, sum.Memories["store"] + sum.Memories["update"] + sum.Memories["merge"]}
			for _, s := range shown {
				for i, v := range s[1:] {
					if n, _ := strconv.Atoi(v); n > final[i] {
						t.Errorf("bar %q shows more than the summary's %v", s[0], final)
					}
				}
			}
			if n, _ := strconv.Atoi(shown[0][3]); n == 0 {
				t.Errorf("first drawing %q shows no messages", shown[0][0])
			}
			if strings.Contains(r.stdout, "files ") {
				t.Errorf("progress on stdout: %q", r.stdout)
			}
		})
	}
}

// llmUsage counts what the fake LLM reported per op.
type llmUsage struct {
	mu                       sync.Mutex
	calls                    map[string]int
	prompt, completion, sent int
}

// handle answers op with fn and reports usage for each reply: the prompt
// tokens estimated from what was sent, the completion tokens from the
// reply.
func (u *llmUsage) handle(srv *llmtest.Server, op string, fn func(llmtest.Request) llmtest.Reply) {
	srv.Handle(op, func(req llmtest.Request) llmtest.Reply {
		r := fn(req)
		r.PromptTokens = imprint.EstimateTokens(req.System) + 1
		for _, m := range req.Messages {
			r.PromptTokens += imprint.EstimateTokens(m.Content)
		}
		r.CompletionTokens = imprint.EstimateTokens(r.Text) + 1
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls[op]++
		u.sent++
		u.prompt += r.PromptTokens
		u.completion += r.CompletionTokens
		return r
	})
}

// fakeLLM starts the fake provider answering every op of import: each step
// scored α 0.7, every user message of a window a memory, every new memory
// stored.
func fakeLLM(t *testing.T) (*llmtest.Server, *llmUsage) {
	srv := llmtest.NewServer(t)
	u := &llmUsage{calls: map[string]int{}}
	idRe := regexp.MustCompile(`\[([^\]]+)\] \[(user|assistant)\]`)
	u.handle(srv, "capture.batch.v1", func(req llmtest.Request) llmtest.Reply {
		var doc struct {
			Steps []struct {
				Idx int `json:"idx"`
			} `json:"steps"`
		}
		_ = json.Unmarshal([]byte(req.User), &doc)
		scores := []any{}
		for _, s := range doc.Steps {
			scores = append(scores, map[string]any{"idx": s.Idx, "reflection_text": "The agent acted on what the user asked.", "alpha": 0.7, "usable": true, "reason": "clear"})
		}
		return llmtest.JSON(map[string]any{"scores": scores})
	})
	u.handle(srv, "capture.alpha.v1", func(llmtest.Request) llmtest.Reply {
		return llmtest.JSON(map[string]any{"alpha": 0.7, "usable": true, "reason": "clear"})
	})
	u.handle(srv, "capture.reflection.synth.v1", func(llmtest.Request) llmtest.Reply {
		return llmtest.Text("The agent acted on what the user asked.")
	})
	u.handle(srv, "extract.l1.v1", func(req llmtest.Request) llmtest.Reply {
		var mems []any
		var ids []string
		if i := strings.Index(req.User, "NEW MESSAGES:"); i >= 0 {
			for _, m := range idRe.FindAllStringSubmatch(req.User[i:], -1) {
				ids = append(ids, m[1])
				if m[2] == "user" {
					mems = append(mems, map[string]any{"content": "The user said something in message " + m[1], "type": "persona",
						"priority": 60, "source_message_ids": []string{m[1]}})
				}
			}
		}
		if len(mems) == 0 {
			return llmtest.JSON(map[string]any{"scenes": []any{}})
		}
		return llmtest.JSON(map[string]any{"scenes": []any{map[string]any{"scene_name": "work", "message_ids": ids, "memories": mems}}})
	})
	u.handle(srv, "extract.dedup.v1", func(req llmtest.Request) llmtest.Reply {
		var doc struct {
			NewMemories []struct{ ID string } `json:"new_memories"`
		}
		_ = json.Unmarshal([]byte(req.User), &doc)
		ds := []any{}
		for _, n := range doc.NewMemories {
			ds = append(ds, map[string]any{"record_id": n.ID, "action": "store", "target_ids": []string{}})
		}
		return llmtest.JSON(map[string]any{"decisions": ds})
	})
	return srv, u
}

// How far import --dry-run's estimate of LLM calls and prompt tokens may be
// from a real run on the examples, either way. The estimate guesses the
// fixed prompt parts and assumes a judge call per extraction window. On
// these files it was measured at 4 calls / 2354 tokens estimated against
// 4 / 3067 sent for capture alone, and 10 / 7147 against 9 / 8334 for the
// whole import: within 1.3×; the test allows 1.5×.
const (
	estimateCallsFactor  = 1.5
	estimateTokensFactor = 1.5
)

// TestImportWithLLMCountsUsage imports the examples against the fake LLM:
// the summary's LLM calls and tokens are what the fake reported, and the
// dry run estimated them within a known factor, for capture alone
// (--no-extract) and for the whole import.
func TestImportWithLLMCountsUsage(t *testing.T) {
	t.Parallel()
	paths := []string{repoFile(t, "examples/conversation.json"), repoFile(t, "examples/claude-code/session.jsonl")}
	for _, tt := range []struct {
		name  string
		synth bool
		flags []string
		ops   []string // ops that must have been called
	}{
		// Capture alone: the estimate counts its calls exactly.
		{"capture only", true, []string{"--no-extract"}, []string{"capture.batch.v1"}},
		// Without synthesis, steps without a reflection (all of these)
		// are not scored: no capture call, and none estimated.
		{"capture only without synthesis", false, []string{"--no-extract"}, nil},
		{"capture and extraction", true, nil, []string{"capture.batch.v1", "extract.l1.v1", "extract.dedup.v1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, u := fakeLLM(t)
			env := map[string]string{
				"IMPRINT_LLM_PROVIDER":    "openai",
				"IMPRINT_LLM_BASE_URL":    srv.URL,
				"IMPRINT_LLM_MODEL":       "x",
				"IMPRINT_LLM_MAX_RETRIES": "0",
				// With synthesis every episode is scored, reflection or
				// not, so capture calls the LLM for each.
				"IMPRINT_CAPTURE_SYNTH_REFLECTIONS": strconv.FormatBool(tt.synth),
			}
			dir := t.TempDir()
			args := append(append([]string{"--data-dir", dir}, tt.flags...), paths...)
			dry := importJSON(t, env, append([]string{"--dry-run"}, args...)...)
			if len(srv.Requests()) != 0 {
				t.Fatalf("dry run called the LLM %d times", len(srv.Requests()))
			}
			if dry.EstCalls == nil || dry.EstTokens == nil {
				t.Fatalf("dry run without an estimate: %+v", dry)
			}
			sum := importJSON(t, env, args...)
			u.mu.Lock()
			calls, prompt, completion, byOp := u.sent, u.prompt, u.completion, u.calls
			u.mu.Unlock()
			if sum.LLMCalls != calls || sum.PromptTokens != prompt || sum.CompletionTokens != completion {
				t.Errorf("summary: %d calls, %d prompt + %d completion tokens; the fake answered %d calls with %d + %d",
					sum.LLMCalls, sum.PromptTokens, sum.CompletionTokens, calls, prompt, completion)
			}
			for _, op := range tt.ops {
				if byOp[op] == 0 {
					t.Errorf("no %s call: %v", op, byOp)
				}
			}
			if tt.flags != nil && *dry.EstCalls != calls {
				t.Errorf("capture alone: estimated %d LLM calls, the import made %d", *dry.EstCalls, calls)
			}
			if sum.Traces == 0 || (tt.flags == nil && sum.Memories["store"] == 0) {
				t.Errorf("import with the LLM: %+v", sum)
			}
			t.Logf("%s: estimated %d calls / %d prompt tokens, real %d / %d (%v)", tt.name, *dry.EstCalls, *dry.EstTokens, calls, prompt, byOp)
			within := func(est, real int, factor float64) bool {
				return float64(est) <= factor*float64(real) && float64(real) <= factor*float64(est)
			}
			if !within(*dry.EstCalls, calls, estimateCallsFactor) {
				t.Errorf("estimated %d LLM calls, the import made %d: not within a factor of %v", *dry.EstCalls, calls, estimateCallsFactor)
			}
			if !within(*dry.EstTokens, prompt, estimateTokensFactor) {
				t.Errorf("estimated %d prompt tokens, the import sent %d: not within a factor of %v", *dry.EstTokens, prompt, estimateTokensFactor)
			}
		})
	}
}
