package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/redact/redacttest"
)

// TestNoSecretAtRestOrSent records a fake secret of every shape the
// redactor knows through every input path — imprint record, imprint
// capture, imprint import of a Claude Code transcript, and, against a
// running imprint serve, POST /v1/messages, POST /v1/episodes (turn text,
// thinking, reflection, tool input and output), live turns then finalize and
// end, and the Claude Code hook — with an LLM configured (a fake that
// echoes what it is sent into reflections and memories), runs capture and
// extraction to the end, and finds no secret in any byte under the data
// dirs (the database, its WAL, the shards), the logs at info, any API
// answer, or any LLM request body.
func TestNoSecretAtRestOrSent(t *testing.T) {
	t.Parallel()
	cases := redacttest.Cases()
	model := llmtest.NewServer(t)
	echoModel(model)
	dir, hookDir := t.TempDir(), t.TempDir()
	env := map[string]string{
		"HOME":                       t.TempDir(),
		"IMPRINT_LLM_PROVIDER":       "openai",
		"IMPRINT_LLM_BASE_URL":       model.URL,
		"IMPRINT_LLM_MODEL":          "test-model",
		"IMPRINT_LLM_MAX_RETRIES":    "0",
		"IMPRINT_CAPTURE_BATCH_MODE": "per_episode",
		"IMPRINT_EXTRACTION_IDLE":    "1h",
	}
	var logs, answers []string // what was printed or answered, by where
	run := func(args ...string) result {
		t.Helper()
		r := runImprint(t, env, append(args, "--data-dir", dir)...)
		if r.code != 0 {
			t.Fatalf("imprint %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		logs = append(logs, "imprint "+args[0]+" stderr:\n"+r.stderr)
		answers = append(answers, "imprint "+args[0]+" stdout:\n"+r.stdout)
		return r
	}

	// The command-line paths, on the data dir the server opens next.
	run("record", "--json", writeTemp(t, "messages.json", mustJSON(t, map[string]any{"session_id": "cli-record", "messages": secretMessages(cases)})))
	run("capture", "--json", writeTemp(t, "episode.json", mustJSON(t, secretEpisode("cli-capture", cases))))
	transcript := writeTemp(t, "cli-import.jsonl", claudeCodeTranscript(t, "cli-import", cases))
	run("import", "--json", transcript)
	run("extract", "--json", "--all")

	s := startInProc(t, dir, env)
	api := &apiClient{t: t, base: s.URL}
	api.post("/v1/messages", map[string]any{"session_id": "api-messages", "messages": secretMessages(cases)})
	var posted struct {
		EpisodeID string `json:"episode_id"`
	}
	api.postInto("/v1/episodes", secretEpisode("api-episode", cases), &posted)
	api.get("/v1/episodes/" + url.PathEscape(posted.EpisodeID)) // stored, capture not yet run
	live := secretEpisode("live", cases).Turns
	var open struct {
		EpisodeID string `json:"episode_id"`
	}
	api.postInto("/v1/sessions/live/turns", map[string]any{"turns": live[:len(live)/2]}, &open)
	api.post("/v1/sessions/live/turns", map[string]any{"turns": live[len(live)/2:]})
	api.get("/v1/episodes/" + url.PathEscape(open.EpisodeID)) // open: not captured
	var closed struct {
		EpisodeID string `json:"episode_id"`
	}
	api.postInto("/v1/sessions/live/finalize", map[string]any{}, &closed)
	api.post("/v1/sessions/live/end", map[string]any{})
	api.post("/v1/sessions/api-messages/end", map[string]any{})
	hookEnv := map[string]string{"HOME": t.TempDir(), "IMPRINT_SERVER": s.URL, "IMPRINT_DATA_DIR": hookDir, "IMPRINT_AGENT": "default"}
	hookTranscript := writeTemp(t, "hook.jsonl", claudeCodeTranscript(t, "hook", cases))
	for _, event := range []string{"Stop", "SessionEnd"} {
		r := runHook(t, hookEnv, hookPayloadJSON(t, event, "hook", hookTranscript, ""), event)
		if r.code != 0 {
			t.Fatalf("hook %s: exit %d: %s", event, r.code, r.stderr)
		}
		logs = append(logs, "hook stderr:\n"+r.stderr)
		answers = append(answers, "hook stdout:\n"+r.stdout)
	}
	api.post("/v1/sessions/hook/extract", map[string]any{})
	s.drain(t)

	// Everything the API answers about what was recorded.
	var mems struct {
		Memories []imprint.Memory `json:"memories"`
	}
	api.getInto("/v1/memories?limit=1000", &mems)
	var traces struct {
		Traces []imprint.Trace `json:"traces"`
	}
	api.getInto("/v1/traces?limit=1000", &traces)
	episodes := map[string]bool{posted.EpisodeID: true, closed.EpisodeID: true}
	for _, tr := range traces.Traces {
		episodes[tr.EpisodeID] = true
		api.get("/v1/traces/" + url.PathEscape(tr.ID))
	}
	for id := range episodes {
		api.get("/v1/episodes/" + url.PathEscape(id))
		api.get("/v1/episodes/" + url.PathEscape(id) + "/traces")
	}
	for _, m := range mems.Memories {
		api.get("/v1/memories/" + url.PathEscape(m.ID))
	}
	for _, q := range []string{"password key token secret", "deploy staging AWS", "card charge", "密码", "webhook bot"} {
		api.get("/v1/search?kind=all&limit=50&q=" + url.QueryEscape(q))
		api.get("/v1/recall?q=" + url.QueryEscape(q))
	}
	api.get("/v1/status")
	answers = append(answers, api.answers...)
	if len(mems.Memories) == 0 || len(traces.Traces) == 0 {
		t.Fatalf("%d memories and %d traces: the test needs both to check", len(mems.Memories), len(traces.Traces))
	}
	// Redaction keeps the text around a secret: the posted episode is
	// there with markers in the secrets' places.
	ep := api.get("/v1/episodes/" + url.PathEscape(posted.EpisodeID))
	if !strings.Contains(ep, "[REDACTED:") || !strings.Contains(ep, "Charge my card ") {
		t.Errorf("the posted episode lost its text or has no marker:\n%.600s", ep)
	}
	if n := len(model.RequestsFor("extract.l1.v1")); n == 0 {
		t.Errorf("no extraction request reached the model")
	}

	// The files while the server runs (WAL included), then after it stopped
	// and checkpointed.
	files := dataFiles(t, dir, hookDir)
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, s.stderr.String())
	}
	logs = append(logs, "serve stderr:\n"+s.stderr.String())
	files = append(files, dataFiles(t, dir, hookDir)...)

	var bodies []string
	for _, r := range model.Requests() {
		bodies = append(bodies, "LLM request "+r.Op+":\n"+string(r.Body))
	}
	for _, group := range []struct {
		what  string
		texts []string
	}{{"file", files}, {"log", logs}, {"answer", answers}, {"LLM request", bodies}} {
		if len(group.texts) == 0 {
			t.Errorf("no %s to check", group.what)
		}
		for _, text := range group.texts {
			for _, tc := range cases {
				for _, secret := range tc.Secrets {
					if i := strings.Index(text, secret); i >= 0 {
						where, _, _ := strings.Cut(text, "\n")
						t.Errorf("%s: the %s secret %.10q… is in %s", group.what, tc.Name, secret, where)
					}
				}
			}
		}
	}
}

// secretMessages is one message per shape, alternating user and assistant.
func secretMessages(cases []redacttest.Case) []map[string]any {
	var out []map[string]any
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, tc := range cases {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out = append(out, map[string]any{"id": fmt.Sprintf("m%03d", i), "role": role,
			"timestamp": start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339), "content": tc.Text})
	}
	return out
}

// secretEpisode is an episode with one step per shape: the user's request,
// the assistant's thinking, reflection and tool call (its input), and the
// tool's output, each holding the secret.
func secretEpisode(sessionID string, cases []redacttest.Case) imprint.Episode {
	ep := imprint.Episode{SessionID: sessionID, Scope: imprint.DefaultScope()}
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i, tc := range cases {
		ts := imprint.At(start.Add(time.Duration(i) * time.Minute))
		input, _ := json.Marshal(map[string]any{"command": tc.Text, "env": map[string]string{"NOTE": tc.Text}})
		ep.Turns = append(ep.Turns,
			imprint.Turn{Role: imprint.RoleUser, Content: "Please use this: " + tc.Text, TS: ts},
			imprint.Turn{Role: imprint.RoleAssistant, Content: "Running it with " + tc.Text, TS: ts,
				Meta: imprint.TurnMeta{Name: "Bash", Input: input, Thinking: "The user gave " + tc.Text, Reflection: "I used " + tc.Text}},
			imprint.Turn{Role: imprint.RoleTool, Content: "output: " + tc.Text, TS: ts,
				Meta: imprint.TurnMeta{Name: "Bash", Error: "warning: " + tc.Text}},
		)
	}
	return ep
}

// claudeCodeTranscript is a Claude Code session file with one exchange per
// shape: the user's text, the assistant's thinking, text and tool_use, and
// the tool_result.
func claudeCodeTranscript(t *testing.T, sessionID string, cases []redacttest.Case) string {
	t.Helper()
	var b strings.Builder
	start := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	line := func(v map[string]any) {
		b.WriteString(mustJSON(t, v))
		b.WriteByte('\n')
	}
	for i, tc := range cases {
		ts := func(s int) string {
			return start.Add(time.Duration(i)*time.Minute + time.Duration(s)*time.Second).Format(time.RFC3339)
		}
		id := func(k string) string { return fmt.Sprintf("%s_%03d_%s", sessionID, i, k) }
		line(map[string]any{"type": "user", "timestamp": ts(0), "sessionId": sessionID, "uuid": id("u"), "cwd": "/tmp",
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": tc.Text}}}})
		line(map[string]any{"type": "assistant", "timestamp": ts(10), "sessionId": sessionID, "uuid": id("a"), "cwd": "/tmp",
			"message": map[string]any{"id": id("msg"), "type": "message", "role": "assistant", "model": "claude", "content": []any{
				map[string]any{"type": "thinking", "thinking": "They shared " + tc.Text},
				map[string]any{"type": "text", "text": "I will run it: " + tc.Text},
				map[string]any{"type": "tool_use", "id": id("tool"), "name": "Bash", "input": map[string]any{"command": tc.Text}},
			}}})
		line(map[string]any{"type": "user", "timestamp": ts(20), "sessionId": sessionID, "uuid": id("r"), "cwd": "/tmp",
			"message": map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": id("tool"), "content": "ran: " + tc.Text},
			}}})
	}
	return b.String()
}

// echoModel answers every operation as a model that repeats what it is
// sent would: reflections and memories quote the request, so a secret
// that reached the model would come back into what is stored.
func echoModel(s *llmtest.Server) {
	quote := func(r llmtest.Request) string { return strings.TrimSpace(r.User[:min(len(r.User), 1500)]) }
	s.Handle("capture.reflection.synth.v1", func(r llmtest.Request) llmtest.Reply {
		return llmtest.Text("I looked at this step: " + quote(r))
	})
	s.Handle("capture.alpha.v1", func(r llmtest.Request) llmtest.Reply {
		return llmtest.JSON(map[string]any{"alpha": 0.8, "usable": true, "reason": "quotes " + quote(r)})
	})
	s.Handle("capture.batch.v1", func(r llmtest.Request) llmtest.Reply {
		var in struct {
			Steps []struct {
				Idx    int    `json:"idx"`
				State  string `json:"state"`
				Action string `json:"action"`
			} `json:"steps"`
		}
		_ = json.Unmarshal([]byte(r.User), &in)
		var scores []any
		for _, st := range in.Steps {
			scores = append(scores, map[string]any{"idx": st.Idx, "reflection_text": "Step " + st.State + " then " + st.Action,
				"alpha": 0.8, "usable": true, "reason": "ok"})
		}
		return llmtest.JSON(map[string]any{"scores": scores})
	})
	extractReply := func(r llmtest.Request) llmtest.Reply {
		_, part, ok := strings.Cut(r.User, "NEW MESSAGES:")
		m := messageIDRe.FindStringSubmatch(part)
		if !ok || m == nil {
			return llmtest.JSON(map[string]any{"scenes": []any{}})
		}
		return llmtest.JSON(map[string]any{"scenes": []any{map[string]any{
			"scene_name": "Credentials " + m[1], "message_ids": []string{m[1]},
			"memories": []any{map[string]any{"content": "The user shared: " + strings.TrimSpace(part[:min(len(part), 1500)]),
				"type": "persona", "priority": 70, "source_message_ids": []string{m[1]}}},
		}}})
	}
	s.Handle("extract.l1.v1", extractReply)
	s.Handle("extract.l1.people.v1", extractReply)
	s.Handle("extract.dedup.v1", func(r llmtest.Request) llmtest.Reply {
		var in struct {
			New []struct {
				ID string `json:"id"`
			} `json:"new_memories"`
		}
		_ = json.Unmarshal([]byte(r.User), &in)
		var ds []any
		for _, n := range in.New {
			ds = append(ds, map[string]any{"record_id": n.ID, "action": "store", "target_ids": []string{}})
		}
		return llmtest.JSON(map[string]any{"decisions": ds})
	})
}

// messageIDRe finds the id of a message block in an extraction prompt.
var messageIDRe = regexp.MustCompile(`\[([^\]\s]+)\] \[(?:user|assistant)\]`)

// apiClient calls a running server as a JSON client does and keeps every
// answer.
type apiClient struct {
	t       *testing.T
	base    string
	answers []string
}

func (c *apiClient) post(path string, body any) string {
	c.t.Helper()
	return c.postInto(path, body, nil)
}

func (c *apiClient) postInto(path string, body, out any) string {
	c.t.Helper()
	return c.do(http.MethodPost, path, body, out)
}

func (c *apiClient) get(path string) string {
	c.t.Helper()
	return c.do(http.MethodGet, path, nil, nil)
}

func (c *apiClient) getInto(path string, out any) string {
	c.t.Helper()
	return c.do(http.MethodGet, path, nil, out)
}

func (c *apiClient) do(method, path string, body, out any) string {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(mustJSON(c.t, body))
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	c.answers = append(c.answers, method+" "+path+" answer:\n"+string(b))
	if resp.StatusCode >= 300 {
		c.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return string(b)
}

// dataFiles returns the content of every file under the dirs, each text
// headed by its path.
func dataFiles(t *testing.T, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if os.IsNotExist(err) {
				return nil // a WAL or shm removed meanwhile
			}
			if err != nil {
				return err
			}
			out = append(out, p+"\n"+string(b))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no files under %v", dirs)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}
