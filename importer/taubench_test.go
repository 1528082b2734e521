package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

func readTauFile(t *testing.T) []Transcript {
	t.Helper()
	path := sharedTestdata(t, "tau-bench/airline-40.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open τ-bench testdata: %v", err)
	}
	defer f.Close()
	trs, err := ReadTauBench(f, path)
	if err != nil {
		t.Fatalf("ReadTauBench: %v", err)
	}
	return trs
}

func TestReadTauBenchRealFile(t *testing.T) {
	t.Parallel()
	trs := readTauFile(t)
	if len(trs) != 40 {
		t.Fatalf("got %d transcripts, want 40", len(trs))
	}
	sessions := map[string]bool{}
	var rewards, tools, errs, userMsgs int
	for _, tr := range trs {
		if len(tr.Warnings) > 0 {
			t.Errorf("%s: unexpected warnings %v", tr.SessionID, tr.Warnings)
		}
		if sessions[tr.SessionID] {
			t.Errorf("duplicate session %s", tr.SessionID)
		}
		sessions[tr.SessionID] = true
		if len(tr.Episodes) != 1 {
			t.Fatalf("%s: %d episodes, want 1", tr.SessionID, len(tr.Episodes))
		}
		ep := tr.Episodes[0]
		if ep.Meta.Reward == nil || ep.Meta.TaskID == "" || ep.Meta.Source != SourceTauBench {
			t.Errorf("%s: meta %+v lacks reward, task id or source", tr.SessionID, ep.Meta)
		}
		if *ep.Meta.Reward == 1 {
			rewards++
		}
		for i, turn := range ep.Turns {
			switch turn.Role {
			case imprint.RoleSystem:
				t.Errorf("%s: system turn kept", tr.SessionID)
			case imprint.RoleTool:
				tools++
				if turn.Meta.Name == "" || turn.Meta.ToolCallID == "" || !json.Valid(turn.Meta.Input) {
					t.Errorf("%s turn %d: tool meta %+v incomplete", tr.SessionID, i, turn.Meta)
				}
				if turn.Meta.Error != "" {
					errs++
					if !strings.HasPrefix(turn.Content, "Error:") {
						t.Errorf("%s turn %d: error %q on a result that is not an error", tr.SessionID, i, turn.Meta.Error)
					}
				}
				// A tool turn follows its assistant turn or another tool turn.
				if prev := ep.Turns[i-1].Role; prev != imprint.RoleAssistant && prev != imprint.RoleTool {
					t.Errorf("%s turn %d: tool turn after a %s turn", tr.SessionID, i, prev)
				}
			}
		}
		for _, m := range tr.Messages {
			if m.Role != imprint.RoleUser && m.Role != imprint.RoleAssistant || strings.TrimSpace(m.Content) == "" {
				t.Errorf("%s: L0 message %+v is not user or assistant text", tr.SessionID, m)
			}
			if m.Role == imprint.RoleUser {
				userMsgs++
			}
		}
	}
	// Counted in the file: 254 tool results, 17 of them errors; 14 tasks
	// rewarded 1; 357 user messages.
	got := []int{tools, errs, rewards, userMsgs}
	if diff := cmp.Diff([]int{254, 17, 14, 357}, got); diff != "" {
		t.Errorf("tool turns, tool errors, rewarded tasks, user messages (-want +got):\n%s", diff)
	}

	first := trs[0]
	if first.SessionID != "tau-bench:airline-40:task-0" {
		t.Errorf("session id %q", first.SessionID)
	}
	ep := first.Episodes[0]
	// traj[6] is an assistant message that only calls get_user_details.
	want := []imprint.Turn{
		{Role: imprint.RoleAssistant, Content: ""},
		{Role: imprint.RoleTool, Content: ep.Turns[6].Content, Meta: imprint.TurnMeta{
			Name: "get_user_details", Input: json.RawMessage(`{"user_id":"mia_li_3668"}`), ToolCallID: "call_oIHazX6yQrB8hUwl4cRilFKj"}},
	}
	if diff := cmp.Diff(want, ep.Turns[5:7]); diff != "" {
		t.Errorf("tool-only assistant message (-want +got):\n%s", diff)
	}
}

func TestReadTauBenchDeterministic(t *testing.T) {
	t.Parallel()
	a, b := readTauFile(t), readTauFile(t)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two reads differ (-first +second):\n%s", diff)
	}
}

func TestReadTauBenchMalformed(t *testing.T) {
	t.Parallel()
	in := `[
	 {"task_id": 7, "reward": 1, "traj": [
	   {"role": "user", "content": "cancel my trip"},
	   {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "cancel", "arguments": "{\"id\":\"X\"}"}}]},
	   {"role": "tool", "tool_call_id": "c1", "name": "cancel", "content": "Error: reservation not found"},
	   {"role": "narrator", "content": "?"},
	   {"role": "assistant", "content": [{"type": "text", "text": "I could not find it."}]}
	 ]},
	 {"task_id": 8, "reward": "high", "traj": []},
	 {"task_id": 9, "traj": []},
	 42
	]`
	trs, err := ReadTauBench(strings.NewReader(in), "x/mini.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 1 {
		t.Fatalf("got %d transcripts, want 1", len(trs))
	}
	tr := trs[0]
	if len(tr.Warnings) != 4 {
		t.Errorf("warnings %v, want 4 (unknown role, bad reward, empty traj, not an object)", tr.Warnings)
	}
	ep := tr.Episodes[0]
	var roles []imprint.Role
	for _, turn := range ep.Turns {
		roles = append(roles, turn.Role)
	}
	if diff := cmp.Diff([]imprint.Role{"user", "assistant", "tool", "assistant"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if ep.Turns[2].Meta.Error != "reservation not found" {
		t.Errorf("tool error %q", ep.Turns[2].Meta.Error)
	}
	if len(tr.Messages) != 2 || tr.Messages[1].Content != "I could not find it." {
		t.Errorf("messages %+v, want the user request and the text reply", tr.Messages)
	}
	if tr.SessionID != "tau-bench:mini:task-7" {
		t.Errorf("session %q", tr.SessionID)
	}
}

func TestReadTauBenchNotJSON(t *testing.T) {
	t.Parallel()
	_, err := ReadTauBench(strings.NewReader("not json"), "bad.json")
	if err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("err = %v, want an error naming the file", err)
	}
	if code := imprint.ErrorCode(err); code != "invalid" {
		t.Errorf("code %q, want invalid", code)
	}
}

func FuzzReadTauBench(f *testing.F) {
	f.Add(`[{"task_id":1,"reward":0,"traj":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"Error: x"}]}]`)
	f.Add(`{"task_id":"t","traj":[{"role":"assistant","content":[{"type":"text","text":"x"}]}]}`)
	f.Add(`[{"traj":[{"role":"tool","tool_call_id":"zz","content":"orphan"}]}, null, []]`)
	f.Add(`[{"task_id":1,"traj":[{"role":"user","content":"caf\u00e9 \"x\""},{"role":"user","content":[{"type":"text","text":"a"}]}]},{"traj":[{"role":7}]}]`)
	f.Fuzz(func(t *testing.T, in string) {
		trs, err := ReadTauBench(strings.NewReader(in), "fuzz.json")
		// Decoding the file in one pass gives what decoding each entry
		// alone gives.
		alone, aloneErr := readTauBench(strings.NewReader(in), "fuzz.json", false)
		if fmt.Sprint(err) != fmt.Sprint(aloneErr) || !cmp.Equal(trs, alone) {
			t.Fatalf("in one pass %v %v, entry by entry %v %v", trs, err, alone, aloneErr)
		}
		if err != nil {
			return
		}
		for _, tr := range trs {
			for _, ep := range tr.Episodes {
				if ep.ID == "" || ep.SessionID != tr.SessionID {
					t.Fatalf("episode %+v lacks id or session", ep)
				}
			}
		}
	})
}

// Tool calls and results without ids are paired in order (by name when
// given), so no call is left without its result and no result is doubled.
func TestReadTauBenchCallsWithoutIDs(t *testing.T) {
	t.Parallel()
	in := `[{"task_id": 1, "reward": 0, "traj": [
	  {"role": "user", "content": "check both flights"},
	  {"role": "assistant", "content": null, "tool_calls": [
	    {"function": {"name": "get_flight", "arguments": "{\"n\":\"A1\"}"}},
	    {"function": {"name": "get_status", "arguments": "{\"n\":\"A1\"}"}}]},
	  {"role": "tool", "name": "get_flight", "content": "A1 SFO-JFK"},
	  {"role": "tool", "name": "get_status", "content": "Error: unknown flight"},
	  {"role": "assistant", "content": "Done."}
	]}]`
	trs, err := ReadTauBench(strings.NewReader(in), "noid.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []imprint.TurnMeta
	var outs []string
	for _, turn := range trs[0].Episodes[0].Turns {
		if turn.Role == imprint.RoleTool {
			tools = append(tools, turn.Meta)
			outs = append(outs, turn.Content)
		}
	}
	if len(tools) != 2 {
		t.Fatalf("%d tool turns %v, want one per call", len(tools), outs)
	}
	if tools[0].Name != "get_flight" || outs[0] != "A1 SFO-JFK" || tools[1].Name != "get_status" || tools[1].Error != "unknown flight" {
		t.Errorf("tool turns %+v outputs %q", tools, outs)
	}
}

// TestReadTauBenchOnePass: the shared test data decoded in one pass gives
// what decoding each entry alone gives.
func TestReadTauBenchOnePass(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(sharedTestFile(t, "tau-bench/airline-40.json"))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ReadTauBench(bytes.NewReader(data), "airline-40.json")
	if err != nil {
		t.Fatal(err)
	}
	alone, err := readTauBench(bytes.NewReader(data), "airline-40.json", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 40 {
		t.Fatalf("%d transcripts, want 40", len(whole))
	}
	if d := cmp.Diff(alone, whole); d != "" {
		t.Errorf("one pass differs from entry by entry (-alone +whole):\n%s", d)
	}
}

func BenchmarkReadTauBench(b *testing.B) {
	data, err := os.ReadFile(sharedTestFile(b, "tau-bench/airline-40.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadTauBench(bytes.NewReader(data), "airline-40.json"); err != nil {
			b.Fatal(err)
		}
	}
}
