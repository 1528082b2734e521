package capture

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

func TestDecodeBatch(t *testing.T) {
	t.Parallel()
	want := map[int]bool{0: true, 1: true}
	tests := []struct {
		name    string
		reply   string
		wantErr string // "" means valid
	}{
		{"valid", `{"scores":[{"idx":0,"reflection_text":"a","alpha":0.7,"usable":true,"reason":"r"},{"idx":1,"reflection_text":null,"alpha":0,"usable":false}]}`, ""},
		{"out of order", `{"scores":[{"idx":1,"alpha":0.4,"usable":true},{"idx":0,"alpha":0.7,"usable":true}]}`, ""},
		{"bare array", `[{"idx":0,"alpha":0.7,"usable":true},{"idx":1,"alpha":0.4,"usable":true}]`, ""},
		{"length mismatch", `{"scores":[{"idx":0,"alpha":0.7,"usable":true}]}`, "length mismatch"},
		{"idx not sent", `{"scores":[{"idx":0,"alpha":0.7,"usable":true},{"idx":5,"alpha":0.4,"usable":true}]}`, "not the idx of a step sent"},
		{"duplicate idx", `{"scores":[{"idx":0,"alpha":0.7,"usable":true},{"idx":0,"alpha":0.4,"usable":true}]}`, "appears twice"},
		{"fractional idx", `{"scores":[{"idx":0.5,"alpha":0.7,"usable":true},{"idx":1,"alpha":0.4,"usable":true}]}`, "idx must be an integer"},
		{"alpha not a number", `{"scores":[{"idx":0,"alpha":"bad","usable":true},{"idx":1,"alpha":0.4,"usable":true}]}`, "alpha must be a number"},
		{"alpha missing", `{"scores":[{"idx":0,"usable":true},{"idx":1,"alpha":0.4,"usable":true}]}`, "alpha must be a number"},
		{"usable not boolean", `{"scores":[{"idx":0,"alpha":0.7,"usable":"yes"},{"idx":1,"alpha":0.4,"usable":true}]}`, "usable must be true or false"},
		{"reflection_text not a string", `{"scores":[{"idx":0,"alpha":0.7,"usable":true,"reflection_text":3},{"idx":1,"alpha":0.4,"usable":true}]}`, "reflection_text must be a string"},
		{"no scores", `{"results":[]}`, `"scores" array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeBatch(json.RawMessage(tt.reply), want)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if len(got) != 2 {
					t.Errorf("%d entries", len(got))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

// echoBatch answers capture.batch.v1 with one entry per idx received, in
// REVERSED order: reflection "batch <idx>", α echoAlpha(idx).
func echoBatch(t testing.TB) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		var req batchRequest
		if err := json.Unmarshal([]byte(r.User), &req); err != nil {
			t.Errorf("batch request is not the documented JSON: %v", err)
			return llmtest.Fault500()
		}
		var scores []map[string]any
		for _, s := range slices.Backward(req.Steps) {
			scores = append(scores, map[string]any{"idx": s.Idx, "reflection_text": "batch " + itoa(s.Idx),
				"alpha": echoAlpha(s.Idx), "usable": true, "reason": "echo"})
		}
		return llmtest.JSON(map[string]any{"scores": scores})
	}
}

func echoAlpha(idx int) float64 { return 0.1 + float64(idx)/1000 }

func batchRequests(t *testing.T, srv *llmtest.Server) []batchRequest {
	t.Helper()
	var out []batchRequest
	for _, r := range srv.RequestsFor(OpBatch) {
		var req batchRequest
		if err := json.Unmarshal([]byte(r.User), &req); err != nil {
			t.Fatalf("batch request: %v", err)
		}
		if !r.JSONMode {
			t.Error("batch request without JSON mode")
		}
		out = append(out, req)
	}
	return out
}

func TestBatchScoring(t *testing.T) {
	t.Parallel()
	tool := T("search_flights", `{"from":"SFO"}`, "2 flights found", 25)
	ep := episode(
		U("find me a flight", 0), AR("Searching.", "I searched first because I needed options.", 20), tool, A("There are two.", 30),
		U("book the first", 40), A("Booked.", 50),
		U("thanks", 60), A("You are welcome.", 70),
	)
	t.Run("order independent, synthesis off", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Handle(OpBatch, echoBatch(t))
		res, err := NewRunner(Deps{LLM: m}, DefaultConfig()).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.LLMCalls != (LLMCalls{BatchedReflection: 1}) {
			t.Errorf("llm_calls %+v, want one batched call", res.LLMCalls)
		}
		// Step 0 keeps its adapter reflection verbatim with the α of idx 0;
		// the others get none (synthesis off) whatever the model wrote.
		tr := res.Traces
		if tr[0].Reflection == nil || *tr[0].Reflection != "I searched first because I needed options." || tr[0].Alpha != echoAlpha(0) {
			t.Errorf("step 0: reflection %v α %v", tr[0].Reflection, tr[0].Alpha)
		}
		for _, x := range tr[1:] {
			if x.Reflection != nil || x.Alpha != 0 || x.Usable || x.ReflectionSource != imprint.ReflectionNone {
				t.Errorf("step %s: %+v, want no reflection", x.StepKey, x)
			}
		}
		reqs := batchRequests(t, srv)
		if len(reqs) != 1 {
			t.Fatalf("%d batch requests", len(reqs))
		}
		req := reqs[0]
		var idx []int
		for _, s := range req.Steps {
			idx = append(idx, s.Idx)
			if s.SynthAllowed {
				t.Errorf("step %d: synth_allowed with synthesis off", s.Idx)
			}
		}
		if diff := cmp.Diff([]int{0, 1, 2}, idx); diff != "" {
			t.Errorf("idx sent (-want +got):\n%s", diff)
		}
		s0 := req.Steps[0]
		if s0.Outcome != "2 flights found" || len(s0.ToolCalls) != 1 || s0.ToolCalls[0].Name != "search_flights" || s0.ToolCalls[0].Input != `{"from":"SFO"}` {
			t.Errorf("step 0 sent as %+v", s0)
		}
		if s0.Reflection == "" || req.Steps[1].Reflection != "" {
			t.Errorf("reflections sent: %q, %q", s0.Reflection, req.Steps[1].Reflection)
		}
		if !strings.Contains(req.Steps[1].Outcome, "thanks") {
			t.Errorf("a reply's outcome is the user's next message; got %q", req.Steps[1].Outcome)
		}
		if req.TaskContext == nil || !strings.Contains(*req.TaskContext, "find me a flight") || !strings.Contains(*req.TaskContext, "search_flights") {
			t.Errorf("task_context %v", req.TaskContext)
		}
	})
	t.Run("synthesis on adopts the model's reflections", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Handle(OpBatch, echoBatch(t))
		res, err := NewRunner(Deps{LLM: m}, config(func(c *Config) { c.SynthReflections = true })).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range res.Traces {
			got = append(got, string(x.ReflectionSource)+":"+deref(x.Reflection))
		}
		want := []string{"adapter:I searched first because I needed options.", "synth:batch 1", "synth:batch 2"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("reflections (-want +got):\n%s", diff)
		}
		if res.Traces[2].Alpha != echoAlpha(2) {
			t.Errorf("step 2 α %v, want %v (matched by idx)", res.Traces[2].Alpha, echoAlpha(2))
		}
		if req := batchRequests(t, srv)[0]; req.Steps[0].SynthAllowed || !req.Steps[1].SynthAllowed {
			t.Errorf("synth_allowed must be set only for steps without a reflection")
		}
		if res.LLMCalls.ReflectionSynth != 0 || res.LLMCalls.AlphaScoring != 0 {
			t.Errorf("per-step counters %+v in batched mode", res.LLMCalls)
		}
	})
	t.Run("alpha off, synthesis on: call made, α neutral", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Handle(OpBatch, echoBatch(t))
		res, err := NewRunner(Deps{LLM: m}, config(func(c *Config) { c.SynthReflections, c.AlphaScoring = true, false })).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range res.Traces {
			if x.Alpha != NeutralAlpha || !x.Usable {
				t.Errorf("step %s α %v usable %v, want neutral", x.StepKey, x.Alpha, x.Usable)
			}
		}
		if len(srv.RequestsFor(OpBatch)) != 1 {
			t.Error("no batch call")
		}
	})
	t.Run("alpha and synthesis off: no call", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		res, err := NewRunner(Deps{LLM: m}, config(func(c *Config) { c.AlphaScoring = false })).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(srv.Requests()) != 0 || res.Traces[0].Alpha != NeutralAlpha {
			t.Errorf("%d requests, step 0 α %v", len(srv.Requests()), res.Traces[0].Alpha)
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestBatchFallsBackPerStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmtest.Reply
		code  string
	}{
		{"length mismatch", llmtest.JSON(map[string]any{"scores": []any{map[string]any{"idx": 0, "alpha": 0.3, "usable": true}}}), "llm_output_malformed"},
		{"non-numeric alpha", llmtest.JSON(map[string]any{"scores": []any{
			map[string]any{"idx": 0, "alpha": "x", "usable": true}, map[string]any{"idx": 1, "alpha": 0.2, "usable": true}}}), "llm_output_malformed"},
		{"empty scores", llmtest.JSON(map[string]any{"scores": []any{}}), "llm_output_malformed"},
		{"non-boolean usable", llmtest.JSON(map[string]any{"scores": []any{
			map[string]any{"idx": 0, "alpha": 0.3, "usable": "yes"}, map[string]any{"idx": 1, "alpha": 0.2, "usable": true}}}), "llm_output_malformed"},
		{"idx mismatch", llmtest.JSON(map[string]any{"scores": []any{
			map[string]any{"idx": 0, "alpha": 0.3, "usable": true}, map[string]any{"idx": 7, "alpha": 0.2, "usable": true}}}), "llm_output_malformed"},
		{"not JSON at all", llmtest.Text("I cannot grade these."), "llm_output_malformed"},
		{"provider down", llmtest.Fault500(), "llm_unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, m := newLLM(t)
			srv.Script(OpBatch, tt.reply)
			srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.9, "usable": true}))
			res, err := NewRunner(Deps{LLM: m}, DefaultConfig()).Run(context.Background(), exchanges(2, true), "")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Traces) != 2 {
				t.Fatalf("%d traces, want 2 (none lost)", len(res.Traces))
			}
			if len(res.Warnings) != 1 || res.Warnings[0].Stage != "batch" || res.Warnings[0].Code != tt.code {
				t.Errorf("warnings %+v, want one batch/%s", res.Warnings, tt.code)
			}
			if res.LLMCalls != (LLMCalls{AlphaScoring: 2}) {
				t.Errorf("llm_calls %+v, want 2 per-step alpha calls", res.LLMCalls)
			}
			for _, x := range res.Traces {
				if x.Alpha != 0.9 {
					t.Errorf("step %s α %v, want the per-step 0.9", x.StepKey, x.Alpha)
				}
			}
		})
	}
}

func TestBatchModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		mode        string
		threshold   int
		steps       int
		wantBatched int
		wantAlpha   int
		wantSizes   []int
	}{
		{"auto at threshold batches", BatchAuto, 12, 12, 1, 0, []int{12}},
		{"auto above threshold goes per step", BatchAuto, 12, 13, 0, 13, nil},
		{"per_step never batches", BatchPerStep, 12, 3, 0, 3, nil},
		{"per_episode ignores the threshold", BatchPerEpisode, 2, 5, 1, 0, []int{5}},
		{"per_episode chunks of 64", BatchPerEpisode, 12, 130, 3, 0, []int{64, 64, 2}},
		{"auto with a threshold above 64 chunks too", BatchAuto, 100, 70, 2, 0, []int{64, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, m := newLLM(t)
			srv.Handle(OpBatch, echoBatch(t))
			srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.7, "usable": true}))
			cfg := config(func(c *Config) { c.BatchMode, c.BatchThreshold = tt.mode, tt.threshold })
			res, err := NewRunner(Deps{LLM: m}, cfg).Run(context.Background(), exchanges(tt.steps, true), "")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Traces) != tt.steps {
				t.Fatalf("%d traces, want %d", len(res.Traces), tt.steps)
			}
			if res.LLMCalls != (LLMCalls{BatchedReflection: tt.wantBatched, AlphaScoring: tt.wantAlpha}) {
				t.Errorf("llm_calls %+v", res.LLMCalls)
			}
			var sizes []int
			seen := map[int]bool{}
			for _, req := range batchRequests(t, srv) {
				sizes = append(sizes, len(req.Steps))
				for _, s := range req.Steps {
					seen[s.Idx] = true
				}
			}
			slices.Sort(sizes)
			want := slices.Clone(tt.wantSizes)
			slices.Sort(want)
			if diff := cmp.Diff(want, sizes); diff != "" {
				t.Errorf("batch sizes (-want +got):\n%s", diff)
			}
			if tt.wantBatched > 0 && len(seen) != tt.steps {
				t.Errorf("batches covered %d distinct idx, want %d", len(seen), tt.steps)
			}
			for i, x := range res.Traces {
				want := 0.7
				if tt.wantBatched > 0 {
					want = echoAlpha(i)
				}
				if x.Alpha != want {
					t.Errorf("step %d α %v, want %v", i, x.Alpha, want)
					break
				}
			}
		})
	}
}

func TestDownstreamPreviews(t *testing.T) {
	t.Parallel()
	// Four steps; step 1 uses a tool; step 2 has an extracted reflection.
	ep := episode(
		U("start", 0), A("first reply", 10),
		U("where am I?", 20), A("", 25), T("shell", `{"command":"pwd"}`, "/srv/project", 30),
		U("why?", 40), A("### Reasoning:\nI checked the directory before editing files.\n", 50),
		U("done?", 60), A("yes", 70),
	)
	on := func(c *Config) {
		c.BatchMode, c.BatchThreshold = BatchPerStep, 2
		c.ReflectionContextMode, c.LongEpisodeReflectMode = ContextTaskDownstream, LongPerStepDownstream
		c.SynthReflections = true
	}
	t.Run("on", func(t *testing.T) {
		t.Parallel()
		srv, m := newLLM(t)
		srv.Script(OpSynth, llmtest.Text("I acted on what I saw."))
		srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.5, "usable": true}))
		res, err := NewRunner(Deps{LLM: m}, config(on)).Run(context.Background(), ep, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.LLMCalls != (LLMCalls{ReflectionSynth: 3, AlphaScoring: 4}) {
			t.Errorf("llm_calls %+v", res.LLMCalls)
		}
		byState := map[string]string{}
		for _, r := range srv.RequestsFor(OpSynth) {
			byState[strings.SplitN(strings.SplitN(r.User, "STATE:\n", 2)[1], "\n", 2)[0]] = r.User
		}
		first := byState["start"]
		for _, want := range []string{"DOWNSTREAM:", "[step+1] tool use: shell", "output: shell: /srv/project", "[step+2] reply", "reflection: I checked the directory", "[step+3] reply"} {
			if !strings.Contains(first, want) {
				t.Errorf("first synth prompt lacks %q:\n%s", want, first)
			}
		}
		last := byState["done?"]
		if strings.Contains(last, "DOWNSTREAM:") {
			t.Errorf("the last step has nothing downstream:\n%s", last)
		}
		// The third step's α prompt sees only step+1.
		for _, r := range srv.RequestsFor(OpAlpha) {
			if strings.Contains(r.User, "STATE:\nwhy?") {
				if !strings.Contains(r.User, "[step+1] reply") || strings.Contains(r.User, "[step+2]") {
					t.Errorf("third step's α prompt:\n%s", r.User)
				}
			}
		}
		// Synthesized reflections of this run never appear in previews.
		for _, r := range append(srv.RequestsFor(OpSynth), srv.RequestsFor(OpAlpha)...) {
			if strings.Contains(r.User, "reflection: I acted on what I saw") {
				t.Errorf("a preview shows a reflection synthesized in this run:\n%s", r.User)
			}
		}
	})
	t.Run("off below the threshold or in task mode", func(t *testing.T) {
		t.Parallel()
		for _, cfg := range []Config{
			config(func(c *Config) { on(c); c.BatchThreshold = 4 }),
			config(func(c *Config) { on(c); c.ReflectionContextMode = ContextTask }),
			config(func(c *Config) { on(c); c.LongEpisodeReflectMode = LongPerStep }),
		} {
			srv, m := newLLM(t)
			srv.Script(OpSynth, llmtest.Text("I acted on what I saw."))
			srv.Script(OpAlpha, llmtest.JSON(map[string]any{"alpha": 0.5, "usable": true}))
			if _, err := NewRunner(Deps{LLM: m}, cfg).Run(context.Background(), ep, ""); err != nil {
				t.Fatal(err)
			}
			for _, r := range srv.Requests() {
				if strings.Contains(r.User, "DOWNSTREAM:") {
					t.Errorf("config %+v sent a preview", cfg)
					break
				}
			}
		}
	})
}

// A hostile batched reply: an enormous reflection is capped, a negative α
// is clamped to 0, usable false zeroes α, and α above 1 is 1.
func TestBatchHostileReply(t *testing.T) {
	t.Parallel()
	srv, m := newLLM(t)
	huge := strings.Repeat("I learned a lot. ", 2000)
	srv.Script(OpBatch, llmtest.JSON(map[string]any{"scores": []any{
		map[string]any{"idx": 0, "reflection_text": huge, "alpha": -3, "usable": true},
		map[string]any{"idx": 1, "reflection_text": huge, "alpha": 0.9, "usable": false},
		map[string]any{"idx": 2, "reflection_text": "   ", "alpha": 0.9, "usable": true},
		map[string]any{"idx": 3, "reflection_text": huge, "alpha": 7, "usable": true},
	}}))
	res, err := NewRunner(Deps{LLM: m}, config(func(c *Config) { c.SynthReflections = true })).Run(context.Background(), exchanges(4, false), "")
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Traces
	for _, i := range []int{0, 1, 3} {
		if n := utf8.RuneCountInString(deref(tr[i].Reflection)); n == 0 || n > MaxReflectionChars {
			t.Errorf("step %d reflection has %d runes, want 1..%d", i, n, MaxReflectionChars)
		}
	}
	if tr[0].Alpha != 0 || tr[1].Alpha != 0 || tr[1].Usable || tr[3].Alpha != 1 {
		t.Errorf("α %v %v(usable %v) %v, want 0, 0 (unusable), 1", tr[0].Alpha, tr[1].Alpha, tr[1].Usable, tr[3].Alpha)
	}
	if tr[2].Reflection != nil || tr[2].ReflectionSource != imprint.ReflectionNone || tr[2].Alpha != 0 || tr[2].Usable {
		t.Errorf("whitespace reflection_text kept: %+v", tr[2])
	}
}
