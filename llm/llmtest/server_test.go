package llmtest_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm"
	"github.com/imprint-dev/imprint/llm/llmtest"
)

func complete(t *testing.T, srv *llmtest.Server, format, op, user string) (string, error) {
	t.Helper()
	cl := llmtest.NewClient(t, srv, format, func(o *llm.Options) { o.MaxRetries = -1 })
	resp, err := cl.Complete(t.Context(), imprint.LLMRequest{Op: op, Messages: []imprint.ChatMessage{{Role: "user", Content: user}}})
	return resp.Text, err
}

func TestScriptIsConsumedInOrderAndLastRepeats(t *testing.T) {
	t.Parallel()
	for _, format := range []string{llmtest.FormatOpenAI, llmtest.FormatAnthropic} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.Script("op", llmtest.Text("one"), llmtest.JSON(map[string]int{"n": 2}))
			var got []string
			for range 3 {
				text, err := complete(t, srv, format, "op", "x")
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, text)
			}
			if diff := cmp.Diff([]string{"one", `{"n":2}`, `{"n":2}`}, got); diff != "" {
				t.Errorf("replies (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHandleSeesTheRequest(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Handle("echo", func(r llmtest.Request) llmtest.Reply {
		return llmtest.Text(r.Format + ":" + r.Model + ":" + r.User)
	})
	for _, format := range []string{llmtest.FormatOpenAI, llmtest.FormatAnthropic} {
		text, err := complete(t, srv, format, "echo", "ids m1 m2")
		if err != nil {
			t.Fatal(err)
		}
		if want := format + ":" + llmtest.TestModel + ":ids m1 m2"; text != want {
			t.Errorf("echo = %q, want %q", text, want)
		}
	}
	if n := len(srv.RequestsFor("echo")); n != 2 {
		t.Errorf("RequestsFor(echo) = %d requests, want 2", n)
	}
}

func TestUnscriptedOpFailsLoudly(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	_, err := complete(t, srv, llmtest.FormatOpenAI, "capture.alpha.v1", "x")
	if !errors.Is(err, imprint.ErrLLMUnavailable) {
		t.Fatalf("error = %v, want ErrLLMUnavailable", err)
	}
	if !strings.Contains(err.Error(), "no reply scripted for op capture.alpha.v1") {
		t.Errorf("error %q does not name the unscripted op", err)
	}
}

func TestMissingOpHeaderIsRejected(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script("", llmtest.Text("never"))
	body := []byte(`{"model": "m", "messages": [{"role": "user", "content": "x"}]}`)
	resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "X-Imprint-Op") {
		t.Errorf("status %d body %s, want 400 naming X-Imprint-Op", resp.StatusCode, msg)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("recorded %d requests, want 1", n)
	}
}

func TestRequestParsing(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script("op", llmtest.Text("ok"))
	cl := llmtest.NewClient(t, srv, llmtest.FormatOpenAI)
	req := imprint.LLMRequest{
		Op: "op", System: "sys", JSON: true, MaxTokens: 50, Temperature: 0.5,
		Messages: []imprint.ChatMessage{{Role: "user", Content: "first"}, {Role: "assistant", Content: "reply"}, {Role: "user", Content: "last"}},
	}
	if _, err := cl.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	got.Header, got.Body = nil, nil
	want := llmtest.Request{
		Op: "op", Format: llmtest.FormatOpenAI, Model: llmtest.TestModel, System: "sys",
		Messages: req.Messages, User: "last", JSONMode: true, MaxTokens: 50, Temperature: 0.5,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parsed request (-want +got):\n%s", diff)
	}
}

func TestReset(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Script("op", llmtest.Text("ok"))
	if _, err := complete(t, srv, llmtest.FormatOpenAI, "op", "x"); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("after Reset, %d requests", n)
	}
	if _, err := complete(t, srv, llmtest.FormatOpenAI, "op", "x"); err == nil {
		t.Error("after Reset, the script still answers")
	}
}

func TestFaultHelpers(t *testing.T) {
	t.Parallel()
	if r := llmtest.Fault429("5"); r.Status != 429 || r.RetryAfter != "5" {
		t.Errorf("Fault429 = %+v", r)
	}
	if r := llmtest.Fault500(); r.Status != 500 {
		t.Errorf("Fault500 = %+v", r)
	}
	if r := llmtest.JSON(func() {}); r.Status != 500 {
		t.Errorf("JSON of a func = %+v, want a 500 reply", r)
	}
}
