package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/internal/testfiles"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

// repoFile returns the path of a file in the repository (tests run in
// cmd/imprint).
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("missing %s: %v", rel, err)
	}
	return p
}

// sharedFile returns a path in the repository's testdata folder.
func sharedFile(t *testing.T, rel string) string { return testfiles.Path(t, rel) }

// jsonLines decodes every stdout line into a value of T.
func jsonLines[T any](t *testing.T, r result) []T {
	t.Helper()
	var out []T
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %q is not JSON: %v\nstderr: %s", line, err, r.stderr)
		}
		out = append(out, v)
	}
	return out
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const flightEpisode = `{"session_id":"s1","turns":[
 {"role":"user","content":"Find me a flight SFO to JFK tomorrow","ts":"2026-05-01T10:00:00Z"},
 {"role":"assistant","content":"Let me search.\n\n## Reasoning\nThe user gave origin, destination and date, so a search comes first.","ts":"2026-05-01T10:00:01Z"},
 {"role":"tool","content":"[{\"flight\":\"UA1\"}]","ts":"2026-05-01T10:00:02Z","meta":{"name":"search_flights","input":{"from":"SFO"},"tool_call_id":"c1"}},
 {"role":"assistant","content":"UA1 is available.","ts":"2026-05-01T10:00:03Z"},
 {"role":"user","content":"Book it","ts":"2026-05-01T10:01:00Z"},
 {"role":"assistant","content":"Booked UA1.","ts":"2026-05-01T10:01:05Z"}
]}`

type captureOut struct {
	EpisodeID string          `json:"episode_id"`
	TraceIDs  []string        `json:"trace_ids"`
	Traces    []imprint.Trace `json:"traces"`
	Warnings  []struct{ Stage, Code string }
}

func TestCaptureAndTraces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeTemp(t, "ep.json", flightEpisode)
	r := runImprint(t, nil, "capture", "--json", "--data-dir", dir, file)
	if r.code != 0 {
		t.Fatalf("capture exit %d: %s", r.code, r.stderr)
	}
	res := jsonLines[captureOut](t, r)
	if len(res) != 1 || len(res[0].Traces) != 2 {
		t.Fatalf("want one result with 2 traces (two user requests), got %+v", res)
	}
	first := res[0].Traces[0]
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != "search_flights" || first.ReflectionSource != imprint.ReflectionExtracted {
		t.Errorf("first step: tool calls %+v, reflection source %s", first.ToolCalls, first.ReflectionSource)
	}
	// Capturing again (a retried job) leaves exactly the same traces.
	r2 := runImprint(t, nil, "capture", "--json", "--data-dir", dir, file)
	res2 := jsonLines[captureOut](t, r2)
	if fmt.Sprint(res2[0].TraceIDs) != fmt.Sprint(res[0].TraceIDs) {
		t.Errorf("re-capture trace ids %v, want %v", res2[0].TraceIDs, res[0].TraceIDs)
	}
	tr := runImprint(t, nil, "traces", "--json", "--data-dir", dir, "--episode", res[0].EpisodeID)
	traces := jsonLines[imprint.Trace](t, tr)
	if len(traces) != 2 || traces[0].StepIndex != 0 || traces[1].UserText != "Book it" {
		t.Fatalf("traces after two captures: %+v", traces)
	}
}

func TestCaptureBadInputStoresNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeTemp(t, "good.json", flightEpisode)
	bad := writeTemp(t, "bad.json", `{"session_id":"s2","turns":[{"role":"bot","content":"hi"}]}`)
	r := runImprint(t, nil, "capture", "--json", "--data-dir", dir, good, bad)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2; stderr %s", r.code, r.stderr)
	}
	code, msg := jsonError(t, lastLine(r.stderr))
	if code != "invalid" || !strings.Contains(msg, "role") {
		t.Errorf("error %s %q should name the role field", code, msg)
	}
	tr := runImprint(t, nil, "traces", "--json", "--data-dir", dir)
	if strings.TrimSpace(tr.stdout) != "" {
		t.Errorf("bad input stored traces: %s", tr.stdout)
	}
}

func TestCaptureOtherScopeConflicts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeTemp(t, "ep.json", strings.Replace(flightEpisode, `{"session_id":"s1",`, `{"id":"ep-fixed","session_id":"s1",`, 1))
	if r := runImprint(t, nil, "capture", "--data-dir", dir, file); r.code != 0 {
		t.Fatalf("first capture: %d %s", r.code, r.stderr)
	}
	r := runImprint(t, nil, "capture", "--json", "--data-dir", dir, "--user", "mallory", file)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2", r.code)
	}
	if code, _ := jsonError(t, lastLine(r.stderr)); code != "conflict" {
		t.Errorf("code %q, want conflict", code)
	}
	// And the other scope sees none of it.
	tr := runImprint(t, nil, "traces", "--json", "--data-dir", dir, "--user", "mallory")
	if strings.TrimSpace(tr.stdout) != "" {
		t.Errorf("scope mallory sees traces: %s", tr.stdout)
	}
}

func TestCaptureAbandonedSkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeTemp(t, "ep.json", strings.Replace(flightEpisode, `{"session_id":"s1",`, `{"session_id":"s1","closed_by":"abandoned",`, 1))
	r := runImprint(t, map[string]string{"IMPRINT_CAPTURE_CAPTURE_ABANDONED": "false"}, "capture", "--json", "--data-dir", dir, file)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := jsonLines[captureOut](t, r)
	if len(res) != 1 || len(res[0].Traces) != 0 || len(res[0].Warnings) != 1 || res[0].Warnings[0].Code != "abandoned_skipped" {
		t.Fatalf("got %+v, want no traces and an abandoned_skipped warning", res)
	}
}

type importOut struct {
	Files            int              `json:"files"`
	MessagesRecorded int              `json:"messages_recorded"`
	MessagesSkipped  int              `json:"messages_skipped"`
	Episodes         int              `json:"episodes"`
	Traces           int              `json:"traces"`
	Memories         map[string]int   `json:"memories"`
	Warnings         []map[string]any `json:"warnings"`
	LLMCalls         int              `json:"llm_calls"`
	PromptTokens     int              `json:"prompt_tokens"`
	EstCalls         *int             `json:"estimated_llm_calls"`
	EstTokens        *int             `json:"estimated_prompt_tokens"`
	Extra            map[string]any   `json:"-"`
}

// TestImportExamplesIsIdempotent is the README's main job: the shipped
// examples import with no LLM, a second import adds nothing, and search
// finds what was imported.
func TestImportExamplesIsIdempotent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runImprint(t, nil, "import", "--json", "--data-dir", dir, repoFile(t, "examples"))
	if r.code != 0 {
		t.Fatalf("import exit %d: %s", r.code, r.stderr)
	}
	first := jsonLines[importOut](t, r)[0]
	if first.Files != 3 || first.MessagesRecorded < 100 || first.Episodes < 10 || first.Traces < first.Episodes || first.Memories["store"] < 5 {
		t.Fatalf("first import summary %+v", first)
	}
	if first.LLMCalls != 0 {
		t.Errorf("no LLM configured but %d calls", first.LLMCalls)
	}
	r2 := runImprint(t, nil, "import", "--json", "--data-dir", dir, repoFile(t, "examples"))
	again := jsonLines[importOut](t, r2)[0]
	if again.MessagesRecorded != 0 || again.Episodes != 0 || again.Memories["store"] != 0 || again.MessagesSkipped != first.MessagesRecorded+first.MessagesSkipped {
		t.Fatalf("second import added something: %+v", again)
	}

	s := runImprint(t, nil, "search", "--json", "--data-dir", dir, "--kind", "memory", "Airflow migration")
	hits := jsonLines[imprint.Hit](t, s)
	if len(hits) == 0 || !strings.Contains(strings.ToLower(hits[0].Text), "airflow") && !strings.Contains(strings.ToLower(hits[0].Text), "migration") {
		t.Fatalf("memory search hits %+v", hits)
	}
	if len(hits[0].SourceMessageIDs) == 0 || hits[0].SessionID == nil {
		t.Errorf("memory hit without provenance: %+v", hits[0])
	}
	// A 2-character CJK query matches.
	cjk := jsonLines[imprint.Hit](t, runImprint(t, nil, "search", "--json", "--data-dir", dir, "--kind", "message", "上班"))
	if len(cjk) == 0 || !strings.Contains(cjk[0].Text, "上班") {
		t.Fatalf("CJK search hits %+v", cjk)
	}
	// Traces of the τ-bench episodes are searchable with their episode.
	th := jsonLines[imprint.Hit](t, runImprint(t, nil, "search", "--json", "--data-dir", dir, "--kind", "trace", "reservation cancel"))
	if len(th) == 0 || th[0].EpisodeID == nil {
		t.Fatalf("trace hits %+v", th)
	}
}

func TestImportDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runImprint(t, nil, "import", "--json", "--dry-run", "--data-dir", dir, repoFile(t, "examples/conversation.json"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sum := jsonLines[importOut](t, r)[0]
	if sum.MessagesRecorded != 18 || sum.EstCalls == nil || *sum.EstCalls < 2 || sum.EstTokens == nil || *sum.EstTokens < 200 {
		t.Fatalf("dry run summary %+v", sum)
	}
	m := runImprint(t, nil, "memories", "--json", "--data-dir", dir)
	if strings.TrimSpace(m.stdout) != "" {
		t.Errorf("dry run stored memories: %s", m.stdout)
	}
	// A real import afterwards records them all.
	real := jsonLines[importOut](t, runImprint(t, nil, "import", "--json", "--data-dir", dir, repoFile(t, "examples/conversation.json")))[0]
	if real.MessagesRecorded != 18 {
		t.Errorf("real import after dry run recorded %d, want 18", real.MessagesRecorded)
	}
}

func TestImportMalformedLineIsReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := os.ReadFile(sharedFile(t, "claude-code/representative_messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	broken := lines[0] + lines[1] + "{this is not json\n" + strings.Join(lines[2:], "")
	file := writeTemp(t, "session.jsonl", broken)
	r := runImprint(t, nil, "import", "--json", "--data-dir", dir, file)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sum := jsonLines[importOut](t, r)[0]
	found := false
	for _, w := range sum.Warnings {
		if line, _ := w["line"].(float64); line == 3 && strings.HasSuffix(fmt.Sprint(w["file"]), "session.jsonl") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning naming session.jsonl line 3: %+v", sum.Warnings)
	}
	if sum.MessagesRecorded < 5 || sum.Episodes < 3 {
		t.Errorf("the rest of the file did not import: %+v", sum)
	}
}

func TestRecordExtractMemoriesWithoutLLM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conv := repoFile(t, "examples/conversation.json")
	r := runImprint(t, nil, "record", "--json", "--data-dir", dir, conv)
	if r.code != 0 {
		t.Fatalf("record exit %d: %s", r.code, r.stderr)
	}
	rec := jsonLines[map[string]any](t, r)[0]
	if rec["recorded_count"].(float64) != 18 || rec["scheduler_notified"] != true {
		t.Fatalf("record result %+v", rec)
	}
	// Recording never extracts by itself.
	if m := runImprint(t, nil, "memories", "--json", "--data-dir", dir); strings.TrimSpace(m.stdout) != "" {
		t.Fatalf("record extracted memories: %s", m.stdout)
	}
	x := runImprint(t, nil, "extract", "--json", "--data-dir", dir, "--session", "example-mara")
	if x.code != 0 {
		t.Fatalf("extract exit %d: %s", x.code, x.stderr)
	}
	windows := jsonLines[map[string]any](t, x)
	if len(windows) != 2 {
		t.Fatalf("18 messages in windows of 10 qualified: want 2 windows, got %d", len(windows))
	}
	mems := jsonLines[imprint.Memory](t, runImprint(t, nil, "memories", "--json", "--data-dir", dir))
	if len(mems) < 5 {
		t.Fatalf("heuristic extraction kept %d memories", len(mems))
	}
	for _, m := range mems {
		if m.Extractor != imprint.ExtractorHeuristic || len(m.SourceMessageIDs) == 0 {
			t.Errorf("memory %+v: want extractor heuristic with sources", m)
		}
	}
	// Nothing is pending any more: extracting again adds nothing.
	x2 := runImprint(t, nil, "extract", "--json", "--data-dir", dir)
	if strings.TrimSpace(x2.stdout) != "" {
		t.Errorf("second extract did work: %s", x2.stdout)
	}
	if x := runImprint(t, nil, "extract", "--data-dir", dir, "--session", "nope"); x.code != 2 {
		t.Errorf("extract of an unknown session: exit %d, want 2", x.code)
	}
}

var idRe = regexp.MustCompile(`\[([^\]]+)\] \[user\]`)

// TestExtractWithLLMFailureKeepsMessagesPending runs extraction against the
// fake LLM: a failing provider exits 1 and leaves the window pending; the
// next run sends the same window again and stores what the model returned.
func TestExtractWithLLMFailureKeepsMessagesPending(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := llmtest.NewServer(t)
	env := map[string]string{
		"IMPRINT_LLM_PROVIDER":    "openai",
		"IMPRINT_LLM_BASE_URL":    srv.URL,
		"IMPRINT_LLM_MODEL":       "test-model",
		"IMPRINT_LLM_MAX_RETRIES": "0",
	}
	if r := runImprint(t, env, "record", "--data-dir", dir, repoFile(t, "examples/conversation.json")); r.code != 0 {
		t.Fatalf("record: %d %s", r.code, r.stderr)
	}
	srv.Script("extract.l1.v1", llmtest.Fault500())
	x := runImprint(t, env, "extract", "--json", "--data-dir", dir)
	if x.code != 1 {
		t.Fatalf("extract with a failing LLM: exit %d, want 1; %s", x.code, x.stderr)
	}
	failed := srv.RequestsFor("extract.l1.v1")
	if len(failed) != 1 {
		t.Fatalf("want 1 extraction request, got %d", len(failed))
	}
	// The model now answers with one persona memory per window, citing the
	// first user message id it received.
	srv.Handle("extract.l1.v1", func(req llmtest.Request) llmtest.Reply {
		newPart := req.User[strings.Index(req.User, "NEW MESSAGES:"):]
		m := idRe.FindStringSubmatch(newPart)
		if m == nil {
			return llmtest.JSON(map[string]any{"scenes": []any{}})
		}
		return llmtest.JSON(map[string]any{"scenes": []any{map[string]any{
			"scene_name": "ETL migration", "message_ids": []string{m[1]},
			"memories": []any{map[string]any{"content": "Memory from " + m[1], "type": "persona", "priority": 75, "source_message_ids": []string{m[1]}}},
		}}})
	})
	x2 := runImprint(t, env, "extract", "--json", "--data-dir", dir)
	if x2.code != 0 {
		t.Fatalf("second extract: exit %d: %s", x2.code, x2.stderr)
	}
	reqs := srv.RequestsFor("extract.l1.v1")
	if len(reqs) < 2 || reqs[1].User != failed[0].User {
		t.Fatalf("the failed window was not sent again unchanged")
	}
	mems := jsonLines[imprint.Memory](t, runImprint(t, env, "memories", "--json", "--data-dir", dir))
	if len(mems) != 2 {
		t.Fatalf("want one LLM memory per window (2), got %d: %+v", len(mems), mems)
	}
	for _, m := range mems {
		if m.Extractor != imprint.ExtractorLLM || m.SceneName != "ETL migration" {
			t.Errorf("memory %+v", m)
		}
	}
}

// lastLine returns the last non-empty line of s (the JSON error follows any
// log lines on stderr).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
