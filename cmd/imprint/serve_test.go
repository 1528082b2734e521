package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/shard"
	"github.com/imprint-dev/imprint/sqlite"
)

// inProcServe is `imprint serve` running in-process on a free loopback port.
type inProcServe struct {
	URL    string
	cancel context.CancelFunc
	done   chan int
	stderr *lockedBuffer
}

// startInProc runs `imprint serve --data-dir dir` in-process with env and
// returns once it listens. The server is stopped when the test ends.
// jobsEngineFlag runs the serve tests (in process and the binary) on the
// named jobs.engine instead of the default:
//
//	go test ./cmd/imprint -run 'TestServe' -jobs-engine river
var jobsEngineFlag = flag.String("jobs-engine", "", "jobs.engine for the serve tests (table or river; default: the configured default)")

func startInProc(t *testing.T, dir string, env map[string]string) *inProcServe {
	t.Helper()
	return startInProcCtx(t, context.Background(), dir, env)
}

// startInProcCtx is startInProc under parent (which may carry a test
// clock).
func startInProcCtx(t *testing.T, parent context.Context, dir string, env map[string]string) *inProcServe {
	t.Helper()
	full := map[string]string{"HOME": t.TempDir(), "IMPRINT_SERVER_ADDR": "127.0.0.1:0"}
	if *jobsEngineFlag != "" {
		full["IMPRINT_JOBS_ENGINE"] = *jobsEngineFlag
	}
	for k, v := range env {
		full[k] = v
	}
	ctx, cancel := context.WithCancel(parent)
	s := &inProcServe{cancel: cancel, done: make(chan int, 1), stderr: &lockedBuffer{}}
	go func() {
		s.done <- runEnv(ctx, []string{"serve", "--data-dir", dir}, envMap(full), strings.NewReader(""), &bytes.Buffer{}, s.stderr)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := listenRe.FindStringSubmatch(s.stderr.String()); m != nil {
			s.URL = m[1]
			break
		}
		select {
		case code := <-s.done:
			t.Fatalf("serve exited %d before listening: %s", code, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen within 10s: %s", s.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Cleanup(func() { s.stop() })
	return s
}

// stop cancels the run (as SIGINT does) and returns the exit code.
func (s *inProcServe) stop() int {
	s.cancel()
	select {
	case code := <-s.done:
		s.done <- code
		return code
	case <-time.After(30 * time.Second):
		return -1
	}
}

// status reads /v1/status of the default scope.
func (s *inProcServe) status(t *testing.T) serveStatus {
	t.Helper()
	return s.statusOf(t, "")
}

// statusOf reads /v1/status with a query string (a scope).
func (s *inProcServe) statusOf(t *testing.T, query string) serveStatus {
	t.Helper()
	resp, err := http.Get(s.URL + "/v1/status" + query)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	defer resp.Body.Close()
	var st serveStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatalf("status: %v", err)
	}
	return st
}

// drain waits until the server has no pending message and no unfinished job.
func (s *inProcServe) drain(t *testing.T) {
	t.Helper()
	c := &workloadClient{http: http.DefaultClient}
	c.setBase(s.URL)
	if _, err := waitDrained(context.Background(), c, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestServeRefusesNonLoopbackWithoutToken(t *testing.T) {
	t.Parallel()
	r := runImprint(t, map[string]string{"IMPRINT_SERVER_ADDR": "0.0.0.0:0"}, "serve", "--json", "--data-dir", t.TempDir())
	if r.code != 2 {
		t.Fatalf("exit %d, want 2; stderr %s", r.code, r.stderr)
	}
	if code, msg := jsonError(t, lastLine(r.stderr)); code != "invalid" || !strings.Contains(msg, "server.api_token") {
		t.Errorf("error %s %q should name server.api_token", code, msg)
	}
}

func TestServeStopsGracefully(t *testing.T) {
	t.Parallel()
	s := startInProc(t, t.TempDir(), nil)
	resp, err := http.Get(s.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exit %d after a stop signal, want 0: %s", code, s.stderr.String())
	}
	if _, err := http.Get(s.URL + "/healthz"); err == nil {
		t.Errorf("server still answers after stopping")
	}
}

// TestServeWithTokenNeedsIt checks the --server path sends --token and that
// a wrong one fails with the unauthorized code.
func TestServeWithTokenNeedsIt(t *testing.T) {
	t.Parallel()
	s := startInProc(t, t.TempDir(), map[string]string{"IMPRINT_SERVER_API_TOKEN": "s3cret"})
	conv := repoFile(t, "examples/conversation.json")
	bad := runImprint(t, nil, "record", "--json", "--server", s.URL, "--token", "wrong", conv)
	if bad.code == 0 {
		t.Fatalf("record with a wrong token succeeded")
	}
	if code, _ := jsonError(t, lastLine(bad.stderr)); code != "unauthorized" {
		t.Errorf("code %q, want unauthorized", code)
	}
	good := runImprint(t, map[string]string{"IMPRINT_API_TOKEN": "s3cret"}, "record", "--json", "--server", s.URL, conv)
	if good.code != 0 {
		t.Fatalf("record with the token: exit %d: %s", good.code, good.stderr)
	}
}

// normalizedLines decodes JSON lines, drops the keys that differ between two
// stores by nature (generated ids, wall-clock times), and returns them.
func normalizedLines(t *testing.T, r result, drop ...string) []map[string]any {
	t.Helper()
	rows := jsonLines[map[string]any](t, r)
	for _, row := range rows {
		scrub(row, drop)
	}
	return rows
}

func scrub(v any, drop []string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range drop {
			delete(x, k)
		}
		for _, e := range x {
			scrub(e, drop)
		}
	case []any:
		for _, e := range x {
			scrub(e, drop)
		}
	}
}

// TestRemoteCommandsMatchLocal runs the same commands locally and with
// --server against imprint serve on another data dir, and requires the
// same output (ids generated per store and timings aside) and exit codes.
func TestRemoteCommandsMatchLocal(t *testing.T) {
	t.Parallel()
	local := t.TempDir()
	// No background extraction (neither idle nor due rounds), so the
	// explicit extract step has the same work locally and remotely.
	quiet := map[string]string{"IMPRINT_EXTRACTION_IDLE": "1h", "IMPRINT_EXTRACTION_EVERY_N_ROUNDS": "1000"}
	s := startInProc(t, t.TempDir(), quiet)
	remote := []string{"--server", s.URL, "--data-dir", t.TempDir()}
	conv := repoFile(t, "examples/conversation.json")
	ep := writeTemp(t, "ep.json", flightEpisode)
	volatile := []string{"id", "created_at", "updated_at", "stage_ms", "recorded_at"}

	steps := []struct {
		name string
		args []string
	}{
		{"record", []string{"record", "--json", conv}},
		{"record again", []string{"record", "--json", conv}},
		{"extract", []string{"extract", "--json", "--session", "example-mara"}},
		{"extract nothing pending", []string{"extract", "--json"}},
		{"memories", []string{"memories", "--json"}},
		{"memories of a type", []string{"memories", "--json", "--type", "instruction"}},
		{"capture", []string{"capture", "--json", ep}},
		{"traces", []string{"traces", "--json"}},
		{"search", []string{"search", "--json", "--kind", "memory", "Airflow migration"}},
		{"recall", []string{"recall", "Airflow migration"}},
		{"extract unknown session", []string{"extract", "--json", "--session", "nope"}},
		{"memories bad type", []string{"memories", "--json", "--type", "feelings"}},
	}
	for _, st := range steps {
		l := runImprint(t, quiet, append(append([]string{}, st.args...), "--data-dir", local)...)
		r := runImprint(t, quiet, append(append([]string{}, st.args...), remote...)...)
		if l.code != r.code {
			t.Errorf("%s: exit local %d, remote %d\nlocal: %s\nremote: %s", st.name, l.code, r.code, l.stderr, r.stderr)
			continue
		}
		if l.code != 0 {
			lc, _ := jsonError(t, lastLine(l.stderr))
			rc, _ := jsonError(t, lastLine(r.stderr))
			if lc != rc {
				t.Errorf("%s: error code local %s, remote %s", st.name, lc, rc)
			}
			continue
		}
		if st.name == "recall" {
			if l.stdout != r.stdout {
				t.Errorf("recall differs:\nlocal:\n%s\nremote:\n%s", l.stdout, r.stdout)
			}
			continue
		}
		lv, rv := normalizedLines(t, l, volatile...), normalizedLines(t, r, volatile...)
		if len(lv) == 0 && st.name != "extract nothing pending" {
			t.Errorf("%s printed nothing locally", st.name)
		}
		if d := cmp.Diff(lv, rv); d != "" {
			t.Errorf("%s: output differs (-local +remote):\n%s", st.name, d)
		}
	}
	down := runImprint(t, nil, "memories", "--json", "--server", "http://127.0.0.1:1")
	if down.code != 1 {
		t.Errorf("memories against no server: exit %d, want 1", down.code)
	}
}

// transcriptLines returns the lines of a shared Claude Code transcript.
func transcriptLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(sharedFile(t, "claude-code/"+name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// hookPayloadJSON is Claude Code's stdin payload for event.
func hookPayloadJSON(t *testing.T, event, sessionID, transcript, prompt string) string {
	t.Helper()
	p := map[string]any{"session_id": sessionID, "transcript_path": transcript, "cwd": "/tmp", "hook_event_name": event}
	switch event {
	case "Stop", "SubagentStop":
		p["stop_hook_active"] = false
	case "SessionEnd":
		p["reason"] = "prompt_input_exit"
	case "UserPromptSubmit":
		p["prompt"] = prompt
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runHook runs `imprint hook claude-code event` in-process with payload on
// stdin.
func runHook(t *testing.T, env map[string]string, payload string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runEnv(context.Background(), append([]string{"hook", "claude-code"}, args...), envMap(env), strings.NewReader(payload), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// storedMessages returns session/id of every message of the sessions in
// dir's store (the server must be stopped or idle).
func storedMessages(t *testing.T, dir string, sessions ...string) []string {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	for _, sid := range sessions {
		msgs, err := db.MessagesBefore(context.Background(), imprint.DefaultScope(), sid, math.MaxInt64, 10000)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			out = append(out, sid+"/"+m.ID)
		}
	}
	sort.Strings(out)
	return out
}

// TestClaudeCodeHookTranscriptGrows runs the Stop hook with Claude Code's
// payload twice while the transcript grows, once more with nothing new,
// again after its state is lost, then SessionEnd and a prompt hook: every
// message is recorded once, every episode captured, and the prompt hook
// prints recalled context.
func TestClaudeCodeHookTranscriptGrows(t *testing.T) {
	t.Parallel()
	serverDir := t.TempDir()
	s := startInProc(t, serverDir, map[string]string{"IMPRINT_EXTRACTION_IDLE": "1h"})
	hookDir := t.TempDir()
	env := map[string]string{"HOME": t.TempDir(), "IMPRINT_SERVER": s.URL, "IMPRINT_DATA_DIR": hookDir, "IMPRINT_AGENT": "default"}

	lines := transcriptLines(t, "representative_messages.jsonl")
	transcript := filepath.Join(t.TempDir(), "test_session.jsonl")
	half := 6 // the assistant has answered the second request
	if err := os.WriteFile(transcript, []byte(strings.Join(lines[:half], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := hookPayloadJSON(t, "Stop", "test_session", transcript, "")
	if r := runHook(t, env, stop, "Stop"); r.code != 0 {
		t.Fatalf("first Stop hook: exit %d: %s", r.code, r.stderr)
	}
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Join(lines[half:], "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for i := range 2 {
		if r := runHook(t, env, stop, "Stop"); r.code != 0 {
			t.Fatalf("Stop hook %d after growth: exit %d: %s", i+2, r.code, r.stderr)
		}
	}
	// Losing the hook's own state posts everything again; the service
	// still records nothing twice.
	if err := os.RemoveAll(filepath.Join(hookDir, "hooks")); err != nil {
		t.Fatal(err)
	}
	if r := runHook(t, env, stop, "auto"); r.code != 0 {
		t.Fatalf("Stop hook without state: exit %d: %s", r.code, r.stderr)
	}
	if r := runHook(t, env, hookPayloadJSON(t, "SessionEnd", "test_session", transcript, ""), "SessionEnd"); r.code != 0 {
		t.Fatalf("SessionEnd hook: exit %d: %s", r.code, r.stderr)
	}
	s.drain(t)

	prompt := runHook(t, env, hookPayloadJSON(t, "UserPromptSubmit", "test_session", transcript, "How do Python decorators work?"), "UserPromptSubmit")
	if prompt.code != 0 {
		t.Fatalf("UserPromptSubmit hook: exit %d: %s", prompt.code, prompt.stderr)
	}
	if !strings.Contains(prompt.stdout, "decorator") {
		t.Errorf("prompt hook printed no recalled context about decorators:\n%s", prompt.stdout)
	}

	// What Claude Code's transcript holds, read by the importer.
	tf, err := os.Open(transcript)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := importer.ReadClaudeCode(tf, transcript)
	tf.Close()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range tr.Messages {
		want = append(want, "test_session/"+m.ID)
	}
	sort.Strings(want)
	traces := jsonLines[imprint.Trace](t, runImprint(t, nil, "traces", "--json", "--server", s.URL))
	episodes := map[string]bool{}
	for _, tc := range traces {
		episodes[tc.EpisodeID] = true
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exit %d", code)
	}
	got := storedMessages(t, serverDir, "test_session")
	if len(want) < 6 {
		t.Fatalf("the transcript yields only %d messages", len(want))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("recorded messages (-transcript +stored):\n%s", d)
	}
	if len(episodes) != len(tr.Episodes) {
		t.Errorf("traces cover %d episodes, the transcript has %d", len(episodes), len(tr.Episodes))
	}
}

// TestHookScriptRunsTheBinary runs the shipped hooks/claude-code script
// with the built binary, as Claude Code does while a session goes on: the
// Stop hook on the first half of a real transcript, then twice after the
// rest was appended, each time with Claude Code's stdin payload. Every
// message of the transcript is stored exactly once (in the store and in
// the conversations shard, and counted once by the service) and every
// episode is captured.
func TestHookScriptRunsTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	t.Parallel()
	bin := imprintBin(t)
	serverDir := t.TempDir()
	s := startInProc(t, serverDir, map[string]string{"IMPRINT_EXTRACTION_IDLE": "1h"})
	script, err := filepath.Abs(repoFile(t, "hooks/claude-code/imprint-hook.sh"))
	if err != nil {
		t.Fatal(err)
	}
	lines := transcriptLines(t, "representative_messages.jsonl")
	transcript := filepath.Join(t.TempDir(), "test_session.jsonl")
	half := 6 // the assistant has answered the second request
	if err := os.WriteFile(transcript, []byte(strings.Join(lines[:half], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	readTranscript := func() importer.Transcript {
		t.Helper()
		tf, err := os.Open(transcript)
		if err != nil {
			t.Fatal(err)
		}
		defer tf.Close()
		tr, err := importer.ReadClaudeCode(tf, transcript)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	ids := func(tr importer.Transcript) []string {
		var out []string
		for _, m := range tr.Messages {
			out = append(out, tr.SessionID+"/"+m.ID)
		}
		sort.Strings(out)
		return out
	}
	hookState := t.TempDir()
	// What Claude Code writes on the Stop hook's stdin.
	payload, err := json.Marshal(map[string]any{"session_id": "test_session", "transcript_path": transcript,
		"cwd": filepath.Dir(transcript), "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": false})
	if err != nil {
		t.Fatal(err)
	}
	stop := func(run string) {
		t.Helper()
		cmd := exec.Command("sh", script, "Stop")
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "IMPRINT_BIN=" + bin,
			"IMPRINT_SERVER=" + s.URL, "IMPRINT_DATA_DIR=" + hookState, "IMPRINT_AGENT=default"}
		cmd.Stdin = bytes.NewReader(payload)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hook script, %s: %v\n%s", run, err, out)
		}
	}

	// Extraction waits for extraction.idle (an hour); the captures the
	// hook queued run now.
	jobsIdle := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			j := s.status(t).Jobs
			if j.Available+j.Running+j.Retryable == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("jobs still queued after 30s: %+v", j)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	stop("first half")
	firstHalf := readTranscript()
	jobsIdle()
	if got, want := storedMessages(t, serverDir, "test_session"), ids(firstHalf); !cmp.Equal(got, want) || len(want) == 0 {
		t.Fatalf("after the first Stop: stored %v, the half transcript has %v", got, want)
	}
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Join(lines[half:], "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	stop("after growth")
	stop("again, nothing new")
	full := readTranscript()
	if len(full.Messages) <= len(firstHalf.Messages) {
		t.Fatalf("the appended half adds no message (%d, then %d)", len(firstHalf.Messages), len(full.Messages))
	}
	jobsIdle()
	recorded := metricValue(t, s.URL, "imprint_messages_recorded_total")
	traces := jsonLines[imprint.Trace](t, runImprint(t, nil, "traces", "--json", "--server", s.URL))
	episodes := map[string]bool{}
	for _, tc := range traces {
		episodes[tc.EpisodeID] = true
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exit %d", code)
	}

	want := ids(full)
	if d := cmp.Diff(want, storedMessages(t, serverDir, "test_session")); d != "" {
		t.Errorf("stored messages (-transcript +stored):\n%s", d)
	}
	if recorded != strconv.Itoa(len(want)) {
		t.Errorf("the service recorded %s messages, the transcript has %d", recorded, len(want))
	}
	var shardIDs []string
	if err := shard.Read(filepath.Join(serverDir, "conversations"), func(line []byte) error {
		var l struct {
			ID        string `json:"id"`
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		shardIDs = append(shardIDs, l.SessionID+"/"+l.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(shardIDs)
	if d := cmp.Diff(want, shardIDs); d != "" {
		t.Errorf("conversations shard lines (-transcript +shard), each message once:\n%s", d)
	}
	// An unanswered last request waits for a later Stop or SessionEnd.
	answered := 0
	for _, ep := range full.Episodes {
		if hasRole(ep.Turns, imprint.RoleAssistant) {
			answered++
		}
	}
	if len(episodes) != answered || answered < 2 {
		t.Errorf("traces cover %d episodes, the transcript has %d answered ones", len(episodes), answered)
	}
}

// metricValue reads one sample of /metrics.
func metricValue(t *testing.T, base, sample string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	for _, line := range strings.Split(b.String(), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return v
		}
	}
	return ""
}

// TestServeLiveTurnsCountAndScheduleExtraction posts live turns that reach
// extraction.every_n_rounds: the recorded messages show in /metrics and
// the session is extracted at once, long before the planner's next tick
// (extraction.idle and session.episode_idle are an hour here, so the
// planner ticks every 30 s).
func TestServeLiveTurnsCountAndScheduleExtraction(t *testing.T) {
	t.Parallel()
	s := startInProc(t, t.TempDir(), map[string]string{"IMPRINT_EXTRACTION_IDLE": "1h",
		"IMPRINT_SESSION_EPISODE_IDLE": "1h", "IMPRINT_EXTRACTION_EVERY_N_ROUNDS": "2"})
	// Let the planner's first tick pass, so only the due rounds can queue
	// the extraction.
	time.Sleep(300 * time.Millisecond)
	body := `{"turns":[{"role":"user","content":"I always deploy the billing service with blue-green releases."},` +
		`{"role":"assistant","content":"Noted: blue-green releases for billing."},` +
		`{"role":"user","content":"My team reviews every migration script before it runs."}]}`
	resp, err := http.Post(s.URL+"/v1/sessions/live-1/turns", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("turns: %d", resp.StatusCode)
	}
	if got := metricValue(t, s.URL, "imprint_messages_recorded_total"); got != "3" {
		t.Errorf("imprint_messages_recorded_total = %q after 3 text turns, want 3", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.status(t)
		if st.PendingMessages == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session with due rounds not extracted within 10s: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// flakyEmbeddings is an OpenAI-compatible /embeddings endpoint that answers
// 503 while down is set and deterministic 4-dimensional vectors otherwise.
type flakyEmbeddings struct {
	down  atomic.Bool
	calls atomic.Int64
}

func (f *flakyEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if f.down.Load() {
		http.Error(w, `{"error":{"message":"embedder down"}}`, http.StatusServiceUnavailable)
		return
	}
	var req struct {
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	type item struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	data := make([]item, len(req.Input))
	for i, s := range req.Input {
		data[i] = item{Embedding: []float32{float32(len(s)%7) + 1, float32(strings.Count(s, " ")) + 1, 1, 0.5}, Index: i}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "model": "fake", "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
}

// TestServeRetriesEmbedding records messages and captures an episode while
// the embedder is down: everything is stored without vectors, and once the
// embedder is back the embedding retry job gives every record its vectors.
func TestServeRetriesEmbedding(t *testing.T) {
	t.Parallel()
	emb := &flakyEmbeddings{}
	emb.down.Store(true)
	es := httptest.NewServer(emb)
	defer es.Close()
	dir := t.TempDir()
	s := startInProc(t, dir, map[string]string{
		"IMPRINT_EMBEDDING_PROVIDER": "openai", "IMPRINT_EMBEDDING_BASE_URL": es.URL, "IMPRINT_EMBEDDING_MODEL": "fake",
		"IMPRINT_LLM_MAX_RETRIES": "0", "IMPRINT_EXTRACTION_IDLE": "1h", "IMPRINT_SESSION_EPISODE_IDLE": "1h",
	})
	post := func(path, body string, want int) {
		t.Helper()
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	post("/v1/messages", `{"session_id":"e1","messages":[{"id":"m1","role":"user","content":"I prefer dark roast coffee"}]}`, http.StatusOK)
	// An episode of another scope: only its capture can queue the retry
	// of its traces.
	post("/v1/episodes", `{"session_id":"e2","scope":{"user":"ops"},"turns":[{"role":"user","content":"Check the disk usage on the build host"},`+
		`{"role":"assistant","content":"The build host disk is 80 percent full."}]}`, http.StatusAccepted)
	// Wait until the capture ran (its traces stored without vectors) and
	// the embedding retries of both scopes have failed at least once.
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, opsSt := s.status(t), s.statusOf(t, "?user=ops")
		if st.Jobs.Retryable > 0 && opsSt.Jobs.Retryable > 0 && st.Jobs.Available+st.Jobs.Running+opsSt.Jobs.Available+opsSt.Jobs.Running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no embedding retry pending: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	emb.down.Store(false)
	deadline = time.Now().Add(30 * time.Second)
	for {
		st, opsSt := s.status(t), s.statusOf(t, "?user=ops")
		if st.Jobs.Available+st.Jobs.Running+st.Jobs.Retryable+opsSt.Jobs.Available+opsSt.Jobs.Running+opsSt.Jobs.Retryable == 0 {
			if len(st.FailedJobs)+len(opsSt.FailedJobs) > 0 {
				t.Fatalf("failed jobs: %+v %+v", st.FailedJobs, opsSt.FailedJobs)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("embedding retry did not finish: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc := imprint.DefaultScope()
	msgs, err := db.UnembeddedMessages(context.Background(), sc, 100)
	if err != nil || len(msgs) != 0 {
		t.Errorf("messages still without a vector: %+v %v", msgs, err)
	}
	ops := imprint.Scope{Tenant: imprint.DefaultScopePart, User: "ops", Agent: imprint.DefaultScopePart}
	trs, err := db.UnembeddedTraces(context.Background(), ops, 100)
	if err != nil || len(trs) != 0 {
		t.Errorf("traces still without vectors: %+v %v", trs, err)
	}
	all, err := db.ListTraces(context.Background(), ops, imprint.TraceFilter{})
	if err != nil || len(all) == 0 {
		t.Fatalf("no traces captured: %v", err)
	}
}
