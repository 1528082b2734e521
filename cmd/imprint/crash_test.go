package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/sqlite"
)

// buildImprint compiles the imprint binary into a temp dir and returns its
// path.
func buildImprint(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "imprint")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveProc is one running `imprint serve` process.
type serveProc struct {
	cmd    *exec.Cmd
	URL    string
	stderr *lockedBuffer
	done   chan error // receives Wait's result once
}

// lockedBuffer collects a process's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var listenRe = regexp.MustCompile(`listening on (http://\S+)`)

// startServe starts `imprint serve` on a free loopback port with env (on
// top of a minimal environment) and waits until it prints its address and
// answers /healthz.
func startServe(bin, dataDir string, env map[string]string) (*serveProc, error) {
	cmd := exec.Command(bin, "serve", "--data-dir", dataDir)
	cmd.Env = []string{"HOME=" + dataDir, "PATH=" + os.Getenv("PATH"), "IMPRINT_SERVER_ADDR=127.0.0.1:0"}
	if *jobsEngineFlag != "" {
		cmd.Env = append(cmd.Env, "IMPRINT_JOBS_ENGINE="+*jobsEngineFlag)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	pr, pw := io.Pipe()
	buf := &lockedBuffer{}
	cmd.Stderr = io.MultiWriter(pw, buf)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start serve: %w", err)
	}
	p := &serveProc{cmd: cmd, stderr: buf, done: make(chan error, 1)}
	go func() {
		err := cmd.Wait()
		pw.Close()
		p.done <- err
	}()
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			if m := listenRe.FindStringSubmatch(sc.Text()); m != nil && !sent {
				urlc <- m[1]
				sent = true
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case u := <-urlc:
		p.URL = u
	case err := <-p.done:
		p.done <- err
		return nil, fmt.Errorf("serve exited before listening (%v): %s", err, buf.String())
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("serve printed no address in 20s: %s", buf.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(p.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("serve not healthy in 10s: %v: %s", err, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *serveProc) kill() {
	_ = p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err
}

// stop sends SIGTERM and returns the exit code (-1 when it did not exit
// within 30 s, after which it is killed).
func (p *serveProc) stop() int {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(30 * time.Second):
		p.kill()
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// crashLLM is the fake LLM of the crash test: computed, deterministic
// replies (one memory per user message of a window, stores unless the
// content already exists, a fixed α), each held back for a delay so that a
// kill can land while a call is in flight. It records which calls were in
// flight when the process was killed.
type crashLLM struct {
	srv   *llmtest.Server
	delay map[string]time.Duration

	mu    sync.Mutex
	calls []*llmCall
	kills int
}

type llmCall struct {
	op          string
	ids         []string // NEW MESSAGES ids of an extraction window
	gen         int      // kills before the call started
	finished    bool
	interrupted bool // in flight when the process was killed
	// start and end are when the request arrived and when its reply
	// left (the benchmarks' timeline).
	start, end time.Time
	// turn is the first turn id (s<session>-e<episode>) the prompt names.
	turn string
}

var turnIDRe = regexp.MustCompile(`s\d+-e\d+`)

var windowIDRe = regexp.MustCompile(`(?m)^\[([^\]]+)\] \[(user|assistant)\] \[`)

func newCrashLLM(t testing.TB, extractDelay, captureDelay time.Duration) *crashLLM {
	f := &crashLLM{srv: llmtest.NewServer(t), delay: map[string]time.Duration{
		"extract.l1.v1": extractDelay, "extract.dedup.v1": extractDelay / 4,
		"capture.alpha.v1": captureDelay, "capture.batch.v1": captureDelay,
	}}
	f.srv.Handle("extract.l1.v1", f.wrap("extract.l1.v1", extractReply))
	f.srv.Handle("extract.dedup.v1", f.wrap("extract.dedup.v1", dedupReply))
	f.srv.Handle("capture.alpha.v1", f.wrap("capture.alpha.v1", func(llmtest.Request) llmtest.Reply {
		return llmtest.JSON(map[string]any{"alpha": 0.75, "usable": true, "reason": "clear cause and effect"})
	}))
	f.srv.Handle("capture.batch.v1", f.wrap("capture.batch.v1", batchReply))
	return f
}

// wrap tracks the call and holds the reply back for the op's delay. A call
// finishes under the lock kill holds, so no reply leaves after a kill was
// decided.
func (f *crashLLM) wrap(op string, fn func(llmtest.Request) llmtest.Reply) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		c := &llmCall{op: op, start: time.Now(), turn: turnIDRe.FindString(req.User)}
		if op == "extract.l1.v1" {
			c.ids = newWindowIDs(req.User)
		}
		f.mu.Lock()
		c.gen = f.kills
		f.calls = append(f.calls, c)
		f.mu.Unlock()
		time.Sleep(f.delay[op])
		reply := fn(req)
		f.mu.Lock()
		c.finished, c.end = true, time.Now()
		f.mu.Unlock()
		return reply
	}
}

// newWindowIDs returns the ids of the NEW MESSAGES section of an
// extraction prompt.
func newWindowIDs(user string) []string {
	i := strings.Index(user, "NEW MESSAGES:")
	if i < 0 {
		return nil
	}
	var ids []string
	for _, m := range windowIDRe.FindAllStringSubmatch(user[i:], -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// inFlight reports whether a call of one of ops is being answered.
func (f *crashLLM) inFlight(ops ...string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if !c.finished && !c.interrupted && slices.Contains(ops, c.op) {
			return true
		}
	}
	return false
}

// killDuring kills p while holding the call log, marking every call in
// flight as interrupted.
func (f *crashLLM) killDuring(p *serveProc) (interrupted int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if !c.finished && !c.interrupted {
			c.interrupted = true
			interrupted++
		}
	}
	f.kills++
	p.kill()
	return interrupted
}

// unretriedWindows returns the interrupted extraction windows that no later
// completed call covered (its new messages a superset).
func (f *crashLLM) unretriedWindows() (interrupted int, missing [][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range f.calls {
		if c.op != "extract.l1.v1" || !c.interrupted {
			continue
		}
		interrupted++
		seen := false
		for _, d := range f.calls[i+1:] {
			if d.op == "extract.l1.v1" && d.finished && !d.interrupted && d.gen > c.gen && subset(c.ids, d.ids) {
				seen = true
				break
			}
		}
		if !seen {
			missing = append(missing, c.ids)
		}
	}
	return interrupted, missing
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// extractReply answers an extraction window with one memory per user
// message of its new messages, named after the message id.
func extractReply(req llmtest.Request) llmtest.Reply {
	i := strings.Index(req.User, "NEW MESSAGES:")
	var mems []any
	var ids []string
	if i >= 0 {
		for _, m := range windowIDRe.FindAllStringSubmatch(req.User[i:], -1) {
			ids = append(ids, m[1])
			if m[2] != "user" {
				continue
			}
			mems = append(mems, map[string]any{
				"content": "The user cares about item " + m[1], "type": "persona", "priority": 60,
				"source_message_ids": []string{m[1]},
			})
		}
	}
	if len(mems) == 0 {
		return llmtest.JSON(map[string]any{"scenes": []any{}})
	}
	return llmtest.JSON(map[string]any{"scenes": []any{map[string]any{
		"scene_name": "crash workload", "message_ids": ids, "memories": mems,
	}}})
}

// dedupReply stores every new memory unless a candidate has the same text.
func dedupReply(req llmtest.Request) llmtest.Reply {
	var doc struct {
		Candidates []struct {
			ID, Content string
		} `json:"candidates"`
		NewMemories []struct {
			ID, Content string
		} `json:"new_memories"`
	}
	if err := json.Unmarshal([]byte(req.User), &doc); err != nil {
		return llmtest.JSON(map[string]any{"decisions": []any{}})
	}
	var ds []any
	for _, n := range doc.NewMemories {
		action, targets := "store", []string{}
		for _, c := range doc.Candidates {
			if strings.EqualFold(strings.TrimSpace(c.Content), strings.TrimSpace(n.Content)) {
				action, targets = "skip", []string{c.ID}
				break
			}
		}
		ds = append(ds, map[string]any{"record_id": n.ID, "action": action, "target_ids": targets})
	}
	return llmtest.JSON(map[string]any{"decisions": ds})
}

// batchReply scores every step of a batched call with the same α.
func batchReply(req llmtest.Request) llmtest.Reply {
	var doc struct {
		Steps []struct {
			Idx int `json:"idx"`
		} `json:"steps"`
	}
	_ = json.Unmarshal([]byte(req.User), &doc)
	scores := []any{}
	for _, s := range doc.Steps {
		scores = append(scores, map[string]any{"idx": s.Idx, "reflection_text": nil, "alpha": 0.75, "usable": true, "reason": "clear cause and effect"})
	}
	return llmtest.JSON(map[string]any{"scores": scores})
}

// serveEnv is the environment of a serve process talking to the fake LLM,
// with short idle times so the background work starts quickly.
func serveEnv(llmURL string) map[string]string {
	return map[string]string{
		"IMPRINT_LLM_PROVIDER":           "openai",
		"IMPRINT_LLM_BASE_URL":           llmURL,
		"IMPRINT_LLM_MODEL":              "crash-model",
		"IMPRINT_LLM_MAX_RETRIES":        "0",
		"IMPRINT_EXTRACTION_IDLE":        "1s",
		"IMPRINT_SESSION_EPISODE_IDLE":   "1h",
		"IMPRINT_EXTRACTION_LLM_TIMEOUT": "20s",
		"IMPRINT_LOG_LEVEL":              "info",
	}
}

// workloadClient posts the crash workload to whichever process is current,
// retrying through restarts.
type workloadClient struct {
	base atomic.Pointer[string]
	http *http.Client
	// writing counts the write requests waiting for an answer: a kill
	// while it is above zero lands during a store transaction or just
	// around one.
	writing atomic.Int64
	// requests, when set, logs every request (the benchmarks' timeline).
	requests *requestLog
	// unanswered holds the turns posted by a request that got no answer
	// at least once (a node killed while serving it), as sid/id.
	unanswered sync.Map
}

// noteUnanswered records the turns of a post to path that got no answer.
func (c *workloadClient) noteUnanswered(path string, body []byte) {
	sid, ok := strings.CutPrefix(path, "/v1/sessions/")
	if sid, ok = strings.CutSuffix(sid, "/turns"); !ok {
		return
	}
	var req struct {
		Turns []struct {
			ID string `json:"id"`
		} `json:"turns"`
	}
	if json.Unmarshal(body, &req) != nil {
		return
	}
	for _, t := range req.Turns {
		c.unanswered.Store(sid+"/"+t.ID, true)
	}
}

// requestLog records when requests were sent and answered.
type requestLog struct {
	mu   sync.Mutex
	reqs []loggedRequest
}

type loggedRequest struct {
	path       string
	start, end time.Time
}

func (l *requestLog) add(path string, start time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, loggedRequest{path: path, start: start, end: time.Now()})
}

func (c *workloadClient) setBase(u string) { c.base.Store(&u) }

// errRetryable marks a request that did not get an answer.
var errRetryable = errors.New("no answer")

// post sends body to path and returns the status; a transport error or a
// 5xx is retried until ctx ends.
func (c *workloadClient) post(ctx context.Context, path string, body any) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	for attempt := 0; ; attempt++ {
		status, out, err := c.once(ctx, http.MethodPost, path, b)
		if err == nil && status < 500 {
			return status, out, nil
		}
		if errors.Is(err, errRetryable) {
			c.noteUnanswered(path, b)
		}
		if ctx.Err() != nil {
			return 0, nil, fmt.Errorf("%s %s: %w (last: %v)", http.MethodPost, path, ctx.Err(), err)
		}
		time.Sleep(time.Duration(20+rand.IntN(60)) * time.Millisecond)
	}
}

func (c *workloadClient) once(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, *c.base.Load()+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodPost {
		c.writing.Add(1)
		defer c.writing.Add(-1)
	}
	if c.requests != nil {
		defer c.requests.add(path, time.Now())
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %v", errRetryable, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %v", errRetryable, err)
	}
	return resp.StatusCode, out, nil
}

// crashSessions and crashEpisodes size the workload: each episode has a
// user request and a final assistant answer (2 L0 messages), a tool call
// and a reflection.
const (
	crashSessions = 3
	crashEpisodes = 20
)

var crashBase = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

// crashTurns returns the two turn batches of episode e of session s. Every
// turn has an id, so a batch posted again after a lost answer appends
// nothing.
func crashTurns(s, e int) (request, answer []map[string]any) {
	id := fmt.Sprintf("s%d-e%02d", s, e)
	at := func(sec int) string {
		return crashBase.Add(time.Duration(s)*time.Hour + time.Duration(e)*time.Minute + time.Duration(sec)*time.Second).Format(time.RFC3339)
	}
	request = []map[string]any{{"id": id + "-u", "role": "user", "content": fmt.Sprintf("Session %d request %d: please look up order %s and tell me its status.", s, e, id), "ts": at(0)}}
	answer = []map[string]any{
		{"id": id + "-c", "role": "assistant", "content": "", "ts": at(1)},
		{"id": id + "-t", "role": "tool", "content": fmt.Sprintf(`{"order":"%s","status":"shipped"}`, id), "ts": at(2),
			"meta": map[string]any{"name": "lookup_order", "input": map[string]any{"order": id}, "tool_call_id": "call-" + id}},
		{"id": id + "-a", "role": "assistant", "content": fmt.Sprintf("Order %s has shipped.", id), "ts": at(3),
			"meta": map[string]any{"reflection": "Looking the order up before answering gave a grounded status for " + id + "."}},
	}
	return request, answer
}

// runCrashSession posts one session's episodes (turns, turns, finalize) and
// ends it.
func runCrashSession(ctx context.Context, c *workloadClient, s int) error {
	return runSession(ctx, c, fmt.Sprintf("crash-s%d", s), s, crashEpisodes, 40)
}

// runSession posts episodes episodes of session sid (number s of the
// workload: the turns of crashTurns), each as turns, turns, finalize, a
// pause of pauseMS to twice that between them, and ends the session.
func runSession(ctx context.Context, c *workloadClient, sid string, s, episodes, pauseMS int) error {
	for e := range episodes {
		req, ans := crashTurns(s, e)
		for _, turns := range [][]map[string]any{req, ans} {
			status, out, err := c.post(ctx, "/v1/sessions/"+sid+"/turns", map[string]any{"turns": turns})
			if err != nil {
				return err
			}
			if status != http.StatusOK {
				return fmt.Errorf("session %s episode %d turns: %d %s", sid, e, status, out)
			}
		}
		status, out, err := c.post(ctx, "/v1/sessions/"+sid+"/finalize", map[string]any{"closed_by": "finalized"})
		if err != nil {
			return err
		}
		// A finalize whose answer was lost to a kill is done already: the
		// retry finds no open episode.
		if status != http.StatusAccepted && status != http.StatusNotFound && status != http.StatusConflict {
			return fmt.Errorf("session %s episode %d finalize: %d %s", sid, e, status, out)
		}
		// Paced like an agent between requests, so the workload spans the
		// kills however fast the server answers.
		time.Sleep(time.Duration(pauseMS+rand.IntN(pauseMS)) * time.Millisecond)
	}
	status, out, err := c.post(ctx, "/v1/sessions/"+sid+"/end", map[string]any{})
	if err != nil {
		return err
	}
	if status != http.StatusAccepted {
		return fmt.Errorf("session %s end: %d %s", sid, status, out)
	}
	return nil
}

// serveStatus is the part of /v1/status the tests wait on.
type serveStatus struct {
	PendingMessages int              `json:"pending_messages"`
	Jobs            imprint.JobStats `json:"jobs"`
	FailedJobs      []struct {
		Kind      string `json:"kind"`
		SessionID string `json:"session_id"`
		LastError string `json:"last_error"`
	} `json:"failed_jobs"`
}

// waitDrained polls /v1/status until no message is pending and no job is
// waiting or running.
func waitDrained(ctx context.Context, c *workloadClient, within time.Duration) (serveStatus, error) {
	deadline := time.Now().Add(within)
	var last serveStatus
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, *c.base.Load()+"/v1/status", nil)
		resp, err := c.http.Do(req)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&last)
			resp.Body.Close()
			j := last.Jobs
			if err == nil && last.PendingMessages == 0 && j.Available+j.Running+j.Retryable == 0 {
				return last, nil
			}
		}
		if time.Now().After(deadline) {
			return last, fmt.Errorf("not drained within %v: %+v (%v)", within, last, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// snapshot is what a workload left in the store, in comparable form.
type snapshot struct {
	Messages []string // session/id, sorted
	Memories []string // normalized live contents, sorted
	Traces   []string // session | user text | agent text | reflection | α | tools, sorted
}

func takeSnapshot(ctx context.Context, dataDir string) (snapshot, error) {
	db, err := sqlite.Open(ctx, filepath.Join(dataDir, dbFileName))
	if err != nil {
		return snapshot{}, err
	}
	defer db.Close()
	sc := imprint.DefaultScope()
	var s snapshot
	for i := range crashSessions {
		sid := fmt.Sprintf("crash-s%d", i)
		msgs, err := db.MessagesBefore(ctx, sc, sid, math.MaxInt64, 10000)
		if err != nil {
			return s, err
		}
		for _, m := range msgs {
			s.Messages = append(s.Messages, sid+"/"+m.ID)
		}
	}
	mems, err := db.ListMemories(ctx, sc, imprint.MemoryFilter{Limit: 10000})
	if err != nil {
		return s, err
	}
	for _, m := range mems {
		s.Memories = append(s.Memories, strings.Join(strings.Fields(strings.ToLower(m.Content)), " "))
	}
	trs, err := db.ListTraces(ctx, sc, imprint.TraceFilter{Limit: 10000})
	if err != nil {
		return s, err
	}
	for _, t := range trs {
		refl := ""
		if t.Reflection != nil {
			refl = *t.Reflection
		}
		var tools []string
		for _, tc := range t.ToolCalls {
			tools = append(tools, tc.Name+":"+tc.Output)
		}
		s.Traces = append(s.Traces, fmt.Sprintf("%s | %s | %s | %s | %.2f | %s", t.SessionID, t.UserText, t.AgentText, refl, t.Alpha, strings.Join(tools, ",")))
	}
	sort.Strings(s.Messages)
	sort.Strings(s.Memories)
	sort.Strings(s.Traces)
	return s, nil
}

// crashRun is one run of the workload against the binary, killing it
// kills times.
type crashRun struct {
	bin, dir string
	llm      *crashLLM
	kills    int
	log      func(format string, args ...any)
	// killsDuringWrites counts the kills that landed while write requests
	// were in flight.
	killsDuringWrites int
}

func (r *crashRun) run(ctx context.Context) (snapshot, error) {
	env := serveEnv(r.llm.srv.URL)
	p, err := startServe(r.bin, r.dir, env)
	if err != nil {
		return snapshot{}, err
	}
	defer func() { p.kill() }()
	c := &workloadClient{http: &http.Client{Timeout: 10 * time.Second}}
	c.setBase(p.URL)

	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	errc := make(chan error, crashSessions)
	var posted sync.WaitGroup
	for s := range crashSessions {
		posted.Add(1)
		go func() {
			defer posted.Done()
			errc <- runCrashSession(wctx, c, s)
		}()
	}

	for k := range r.kills {
		// Odd kills land while an LLM call is in flight: the 2nd and 6th
		// during an extraction call (so the test always interrupts a
		// window, however the machine's load shifts capture against
		// extraction), the 4th during any call (extraction or capture
		// scoring). Even ones land at a random point of the writes.
		if k%2 == 1 {
			ops := []string{"extract.l1.v1"}
			if k%4 == 3 {
				ops = append(ops, "capture.alpha.v1", "capture.batch.v1", "extract.dedup.v1")
			}
			deadline := time.Now().Add(20 * time.Second)
			for !r.llm.inFlight(ops...) && time.Now().Before(deadline) {
				time.Sleep(2 * time.Millisecond)
			}
		} else {
			// A random point of the writes: after a random pause, the
			// first moment a write request is in flight.
			time.Sleep(time.Duration(50+rand.IntN(400)) * time.Millisecond)
			deadline := time.Now().Add(5 * time.Second)
			for c.writing.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Microsecond)
			}
		}
		writes := c.writing.Load()
		n := r.llm.killDuring(p)
		if writes > 0 {
			r.killsDuringWrites++
		}
		r.log("kill %d: %d LLM calls and %d write requests in flight", k+1, n, writes)
		if p, err = startServe(r.bin, r.dir, env); err != nil {
			return snapshot{}, fmt.Errorf("restart %d: %w", k+1, err)
		}
		c.setBase(p.URL)
	}
	posted.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			return snapshot{}, fmt.Errorf("workload: %w (serve log: %s)", err, tail(p.stderr.String(), 2000))
		}
	}
	st, err := waitDrained(ctx, c, 60*time.Second)
	if err != nil {
		return snapshot{}, fmt.Errorf("%w (serve log: %s)", err, tail(p.stderr.String(), 3000))
	}
	if len(st.FailedJobs) > 0 {
		return snapshot{}, fmt.Errorf("failed jobs: %+v", st.FailedJobs)
	}
	if code := p.stop(); code != 0 {
		return snapshot{}, fmt.Errorf("serve exited %d on SIGTERM, want 0: %s", code, tail(p.stderr.String(), 2000))
	}
	return takeSnapshot(ctx, r.dir)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// TestServeSurvivesKills runs the same workload against the real binary
// twice — once undisturbed, once killed with SIGKILL six times (during
// LLM calls and during writes) and restarted on the same data dir — and
// requires the same messages (each exactly once), live memories and traces,
// and every interrupted extraction window to be sent to the LLM again.
func TestServeSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it repeatedly; skipped with -short")
	}
	t.Parallel()
	bin := buildImprint(t)
	ctx := context.Background()

	ref := &crashRun{bin: bin, dir: t.TempDir(), llm: newCrashLLM(t, 150*time.Millisecond, 20*time.Millisecond), log: t.Logf}
	crashed := &crashRun{bin: bin, dir: t.TempDir(), llm: newCrashLLM(t, 150*time.Millisecond, 20*time.Millisecond), kills: 6, log: t.Logf}
	var want snapshot
	var refErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		want, refErr = ref.run(ctx)
	}()
	got, err := crashed.run(ctx)
	wg.Wait()
	if refErr != nil {
		t.Fatalf("run without kills: %v", refErr)
	}
	if err != nil {
		t.Fatalf("run with kills: %v", err)
	}

	if n := crashSessions * crashEpisodes * 2; len(want.Messages) != n {
		t.Fatalf("run without kills recorded %d messages, want %d", len(want.Messages), n)
	}
	if len(want.Traces) != crashSessions*crashEpisodes {
		t.Fatalf("run without kills made %d traces, want %d", len(want.Traces), crashSessions*crashEpisodes)
	}
	if n := crashSessions * crashEpisodes; len(want.Memories) != n {
		t.Fatalf("run without kills kept %d memories, want one per user message (%d)", len(want.Memories), n)
	}
	if d := cmp.Diff(want.Messages, got.Messages); d != "" {
		t.Errorf("messages after kills differ (-without +with kills):\n%s", d)
	}
	if d := cmp.Diff(want.Memories, got.Memories); d != "" {
		t.Errorf("live memories after kills differ (-without +with kills):\n%s", d)
	}
	if d := cmp.Diff(want.Traces, got.Traces); d != "" {
		t.Errorf("traces after kills differ (-without +with kills):\n%s", d)
	}
	if crashed.killsDuringWrites == 0 {
		t.Errorf("no kill landed while write requests were in flight; the test proved nothing about interrupted transactions")
	}
	interrupted, missing := crashed.llm.unretriedWindows()
	t.Logf("%d extraction windows were interrupted by kills", interrupted)
	if interrupted == 0 {
		t.Errorf("no kill landed during an extraction call; the test proved nothing about interrupted windows")
	}
	for _, ids := range missing {
		t.Errorf("interrupted extraction window %v was never sent again", ids)
	}
}
