package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

const episodeJSON = `{
  "session_id": "s1",
  "scope": {"tenant": "acme", "user": "u", "agent": "a"},
  "meta": {"depth": 0},
  "turns": [
    {"role": "user", "content": "Find me a flight", "ts": "2026-05-01T10:00:00Z"},
    {"role": "assistant", "content": [{"type": "text", "text": "Searching"}, {"type": "text", "text": "now."}], "ts": 1777629601000,
     "meta": {"reflection": "search first", "depth": 1, "is_subagent": true}},
    {"role": "tool", "content": "UA12", "meta": {"name": "search_flights", "input": {"from": "SFO"}, "error": "", "tool_call_id": "c1"}},
    {"role": "assistant", "content": "UA12 it is."}
  ]
}`

func TestReadEpisodesForms(t *testing.T) {
	t.Parallel()
	second := strings.Replace(strings.ReplaceAll(episodeJSON, "\n", " "), `"s1"`, `"s2"`, 1)
	tests := []struct {
		name     string
		in       string
		sessions []string
	}{
		{"one object", episodeJSON, []string{"s1"}},
		{"array", "[" + episodeJSON + "," + second + "]", []string{"s1", "s2"}},
		{"jsonl", strings.ReplaceAll(episodeJSON, "\n", " ") + "\n\n" + second + "\n", []string{"s1", "s2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eps, warns, err := ReadEpisodes(strings.NewReader(tt.in), "e.json")
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != 0 {
				t.Errorf("warnings: %v", warns)
			}
			var sessions []string
			for _, ep := range eps {
				sessions = append(sessions, ep.SessionID)
			}
			if diff := cmp.Diff(tt.sessions, sessions); diff != "" {
				t.Errorf("sessions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadEpisodesFields(t *testing.T) {
	t.Parallel()
	eps, _, err := ReadEpisodes(strings.NewReader(episodeJSON), "e.json")
	if err != nil {
		t.Fatal(err)
	}
	ep := eps[0]
	if ep.ID != "" {
		t.Errorf("id %q: a missing id is left for capture to derive", ep.ID)
	}
	if ep.Scope != (imprint.Scope{Tenant: "acme", User: "u", Agent: "a"}) || ep.ClosedBy != imprint.ClosedFinalized {
		t.Errorf("scope %+v closed_by %q", ep.Scope, ep.ClosedBy)
	}
	turns := ep.Turns
	if turns[1].Content != "Searching\nnow." {
		t.Errorf("parts joined: %q", turns[1].Content)
	}
	if turns[1].TS != ts("2026-05-01T10:00:01Z") {
		t.Errorf("epoch ms ts: %v", turns[1].TS)
	}
	if turns[2].TS != turns[1].TS || turns[3].TS != turns[1].TS {
		t.Errorf("turn without ts did not get its predecessor's: %v %v", turns[2].TS, turns[3].TS)
	}
	if !turns[1].Meta.IsSubagent || turns[1].Meta.Depth != 1 || turns[1].Meta.Reflection != "search first" {
		t.Errorf("assistant meta: %+v", turns[1].Meta)
	}
	if turns[2].Meta.Name != "search_flights" || string(turns[2].Meta.Input) != `{"from": "SFO"}` || turns[2].Meta.ToolCallID != "c1" {
		t.Errorf("tool meta: %+v", turns[2].Meta)
	}
	if ep.StartedAt != ts("2026-05-01T10:00:00Z") || ep.EndedAt != ts("2026-05-01T10:00:01Z") {
		t.Errorf("started %v ended %v", ep.StartedAt, ep.EndedAt)
	}
}

func TestReadEpisodesInvalid(t *testing.T) {
	t.Parallel()
	good := `{"session_id":"s","turns":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, in, want string
	}{
		{"missing session_id", `{"turns":[{"role":"user","content":"hi"}]}`, "session_id: required"},
		{"blank session_id", `{"session_id":" ","turns":[{"role":"user","content":"hi"}]}`, "session_id: required"},
		{"no turns", `{"session_id":"s"}`, "turns: required"},
		{"empty turns", `{"session_id":"s","turns":[]}`, "turns: must not be empty"},
		{"unknown role in array", "[" + good + "," + good + `,{"session_id":"s","turns":[{"role":"bot","content":"x"}]}]`, `episodes[2].turns[0].role: unknown role "bot"`},
		{"missing role", `{"session_id":"s","turns":[{"content":"x"}]}`, "turns[0].role: required"},
		{"bad ts", `{"session_id":"s","turns":[{"role":"user","content":"x","ts":"yesterday"}]}`, "turns[0].ts"},
		{"bad content", `{"session_id":"s","turns":[{"role":"user","content":42}]}`, "turns[0].content"},
		{"bad closed_by", `{"session_id":"s","closed_by":"later","turns":[{"role":"user","content":"x"}]}`, "closed_by"},
		{"bad meta", `{"session_id":"s","turns":[{"role":"tool","content":"x","meta":{"depth":"deep"}}]}`, "turns[0].meta"},
		{"jsonl line", good + "\n" + `{"session_id":"s","turns":[{"role":"robot"}]}`, `line 2: turns[0].role: unknown role "robot"`},
		{"malformed jsonl line", good + "\n{oops\n", "line 2: malformed JSON"},
		{"malformed document", "{\n  \"session_id\": \"s\",\n  \"turns\": [\n}", "line 4"},
		{"empty", "  ", "empty input"},
		{"not an object", `"hello"`, "expected a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eps, _, err := ReadEpisodes(strings.NewReader(tt.in), "in.json")
			if !errors.Is(err, imprint.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "in.json: ") {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
			if eps != nil {
				t.Errorf("episodes returned with an error")
			}
		})
	}
}

func TestReadEpisodesSkippedParts(t *testing.T) {
	t.Parallel()
	in := `{"session_id":"s","turns":[{"role":"user","content":[{"type":"image","url":"x"},{"type":"text","text":"look"}]}]}`
	eps, warns, err := ReadEpisodes(strings.NewReader(in), "e.json")
	if err != nil {
		t.Fatal(err)
	}
	if eps[0].Turns[0].Content != "look" || len(warns) != 1 || !strings.Contains(warns[0].Message, "turns[0].content") {
		t.Errorf("content %q, warnings %v", eps[0].Turns[0].Content, warns)
	}
}

func FuzzReadEpisodes(f *testing.F) {
	f.Add([]byte(episodeJSON))
	f.Add([]byte(`[{"session_id":"s","turns":[{"role":"user","content":[{"type":"text","text":"x"}],"ts":1}]}]`))
	f.Add([]byte("{\"session_id\":\"s\",\"turns\":[{\"role\":\"tool\"}]}\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		eps, _, err := ReadEpisodes(bytes.NewReader(data), "f.json")
		if err != nil {
			if !errors.Is(err, imprint.ErrInvalid) {
				t.Fatalf("error of unexpected kind: %v", err)
			}
			return
		}
		for _, ep := range eps {
			if strings.TrimSpace(ep.SessionID) == "" || len(ep.Turns) == 0 {
				t.Fatalf("unusable episode accepted: %+v", ep)
			}
			for _, turn := range ep.Turns {
				if !turn.Role.Valid() {
					t.Fatalf("bad role %q", turn.Role)
				}
			}
			if _, err := json.Marshal(ep); err != nil {
				t.Fatalf("episode does not marshal: %v", err)
			}
		}
	})
}

func ts(s string) imprint.Time {
	p, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return imprint.At(p)
}
