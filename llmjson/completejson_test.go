package llmjson_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/llmjson"
)

// The tests run CompleteJSON against the real client of both wire formats,
// talking to a scripted provider.
var formats = []string{llmtest.FormatOpenAI, llmtest.FormatAnthropic}

type fixture struct {
	srv *llmtest.Server
	cl  *llm.Client
}

func newFixture(t *testing.T, format string) fixture {
	t.Helper()
	srv := llmtest.NewServer(t)
	return fixture{srv: srv, cl: llmtest.NewClient(t, srv, format)}
}

func userReq(op, text string) imprint.LLMRequest {
	return imprint.LLMRequest{Op: op, System: "You score steps.", Messages: []imprint.ChatMessage{{Role: "user", Content: text}}}
}

type alphaReply struct {
	Alpha  *float64 `json:"alpha"`
	Usable bool     `json:"usable"`
}

// decodeAlpha is a decode func as ops write them: unmarshal, then validate
// with an error message the model can act on.
func decodeAlpha(out *alphaReply) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		if err := json.Unmarshal(raw, out); err != nil {
			return err
		}
		if out.Alpha == nil {
			return imprint.Invalidf("field alpha is missing")
		}
		if *out.Alpha < 0 || *out.Alpha > 1 {
			return imprint.Invalidf("alpha must be within 0..1, got %v", *out.Alpha)
		}
		return nil
	}
}

func TestCompleteJSON(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format+"/first reply ok", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, format)
			f.srv.Script("capture.alpha.v1", llmtest.Reply{Text: "```json\n{\"alpha\": 0.8, \"usable\": true,}\n```", PromptTokens: 10, CompletionTokens: 3})
			var out alphaReply
			resp, err := llmjson.CompleteJSON(t.Context(), f.cl, userReq("capture.alpha.v1", "STATE: x"), decodeAlpha(&out))
			if err != nil {
				t.Fatal(err)
			}
			if out.Alpha == nil || *out.Alpha != 0.8 || !out.Usable {
				t.Errorf("decoded %+v", out)
			}
			if resp.PromptTokens != 10 || resp.CompletionTokens != 3 {
				t.Errorf("tokens = %d/%d, want 10/3", resp.PromptTokens, resp.CompletionTokens)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 1 || !reqs[0].JSONMode {
				t.Errorf("requests = %d, JSON mode %v; want 1 in JSON mode", len(reqs), len(reqs) > 0 && reqs[0].JSONMode)
			}
		})

		t.Run(format+"/repair retry succeeds", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, format)
			f.srv.Script("capture.alpha.v1",
				llmtest.Reply{Text: `{"alpha": 7, "usable": true}`, PromptTokens: 10, CompletionTokens: 3},
				llmtest.Reply{Text: `{"alpha": 0.7, "usable": true}`, PromptTokens: 20, CompletionTokens: 4},
			)
			var out alphaReply
			resp, err := llmjson.CompleteJSON(t.Context(), f.cl, userReq("capture.alpha.v1", "STATE: x"), decodeAlpha(&out))
			if err != nil {
				t.Fatal(err)
			}
			if out.Alpha == nil || *out.Alpha != 0.7 {
				t.Errorf("decoded %+v, want alpha 0.7", out)
			}
			if resp.PromptTokens != 30 || resp.CompletionTokens != 7 {
				t.Errorf("tokens = %d/%d, want the sum 30/7", resp.PromptTokens, resp.CompletionTokens)
			}
			if resp.Text != `{"alpha": 0.7, "usable": true}` {
				t.Errorf("Text = %q, want the second reply", resp.Text)
			}
			reqs := f.srv.RequestsFor("capture.alpha.v1")
			if len(reqs) != 2 {
				t.Fatalf("got %d requests, want 2", len(reqs))
			}
			second := reqs[1]
			if !second.JSONMode {
				t.Error("repair retry not in JSON mode")
			}
			if len(second.Messages) != 3 {
				t.Fatalf("repair retry has %d messages, want 3: %+v", len(second.Messages), second.Messages)
			}
			if diff := cmp.Diff(imprint.ChatMessage{Role: "user", Content: "STATE: x"}, second.Messages[0]); diff != "" {
				t.Errorf("first message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(imprint.ChatMessage{Role: "assistant", Content: `{"alpha": 7, "usable": true}`}, second.Messages[1]); diff != "" {
				t.Errorf("bad reply message (-want +got):\n%s", diff)
			}
			if second.Messages[2].Role != "user" || !strings.Contains(second.User, "alpha must be within 0..1, got 7") {
				t.Errorf("repair message does not carry the validation error: %+v", second.Messages[2])
			}
		})

		t.Run(format+"/fails after two bad replies", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, format)
			f.srv.Script("capture.alpha.v1", llmtest.Text("I think the step was useful."))
			var out alphaReply
			_, err := llmjson.CompleteJSON(t.Context(), f.cl, userReq("capture.alpha.v1", "STATE: x"), decodeAlpha(&out))
			if !errors.Is(err, imprint.ErrLLMOutputMalformed) {
				t.Fatalf("error = %v, want ErrLLMOutputMalformed", err)
			}
			if code := imprint.ErrorCode(err); code != "llm_output_malformed" {
				t.Errorf("ErrorCode = %q, want llm_output_malformed", code)
			}
			reqs := f.srv.RequestsFor("capture.alpha.v1")
			if len(reqs) != 2 {
				t.Fatalf("got %d requests, want 2 (one repair retry)", len(reqs))
			}
			if got := reqs[1].Messages[1].Content; got != "I think the step was useful." {
				t.Errorf("repair retry's assistant message = %q, want the bad reply", got)
			}
			if !strings.Contains(reqs[1].User, "no JSON") {
				t.Errorf("repair message does not say what was wrong: %q", reqs[1].User)
			}
		})

		t.Run(format+"/decode kind does not mask malformed", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, format)
			f.srv.Script("capture.alpha.v1", llmtest.Text(`{"usable": true}`))
			var out alphaReply
			_, err := llmjson.CompleteJSON(t.Context(), f.cl, userReq("capture.alpha.v1", "x"), decodeAlpha(&out))
			if code := imprint.ErrorCode(err); code != "llm_output_malformed" {
				t.Errorf("ErrorCode(%v) = %q, want llm_output_malformed", err, code)
			}
			if err == nil || !strings.Contains(err.Error(), "field alpha is missing") {
				t.Errorf("error %v does not name the problem", err)
			}
		})

		t.Run(format+"/provider error returned as is", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, format)
			f.srv.Script("capture.alpha.v1", llmtest.Status(401))
			var out alphaReply
			_, err := llmjson.CompleteJSON(t.Context(), f.cl, userReq("capture.alpha.v1", "x"), decodeAlpha(&out))
			if !errors.Is(err, imprint.ErrLLMAuth) {
				t.Fatalf("error = %v, want ErrLLMAuth", err)
			}
			if n := len(f.srv.Requests()); n != 1 {
				t.Errorf("got %d requests, want 1", n)
			}
		})
	}
}
