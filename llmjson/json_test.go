package llmjson_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llmjson"
)

func TestExtractJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string // JSON compared by value; empty means an error is expected
	}{
		{"plain object", `{"alpha": 0.7, "usable": true}`, `{"alpha":0.7,"usable":true}`},
		{"surrounding whitespace", "\n\n  {\"a\":1}\n", `{"a":1}`},
		{"json code fence", "```json\n{\"a\": [1, 2]}\n```", `{"a":[1,2]}`},
		{"bare code fence with prose", "Sure! Here it is:\n```\n{\"a\": \"b\"}\n```\nLet me know.", `{"a":"b"}`},
		{"prose around", `Here you go: {"scores": [{"idx": 0, "alpha": 0.9}]} Hope this helps!`, `{"scores":[{"idx":0,"alpha":0.9}]}`},
		{"prose with brackets first", `I read [the notes] and {the plan}; result: {"a": 1}`, `{"a":1}`},
		{"trailing commas", `{"a": [1, 2, ], "b": "c", }`, `{"a":[1,2],"b":"c"}`},
		{"trailing commas in prose", `Result: {"a": [1, 2,],} done`, `{"a":[1,2]}`},
		{"invalid escape", `{"path": "C:\q\dir"}`, `{"path":"C:\\q\\dir"}`},
		{"escape at end of truncated string", `{"a": "x\`, `{"a":"x\\"}`},
		{"short unicode escape", `{"a": "\u12"}`, `{"a":"\\u12"}`},
		{"lone high surrogate", `{"s": "x\ud800y"}`, `{"s":"x\ufffdy"}`},
		{"lone low surrogate", `{"s": "\udc00"}`, `{"s":"\ufffd"}`},
		{"high surrogate before non-low escape", `{"s": "\ud800\u0041"}`, `{"s":"\ufffdA"}`},
		{"surrogate pair kept", `{"s": "\ud83d\ude00"}`, `{"s":"😀"}`},
		{"raw newline in string", "{\"a\": \"line one\nline two\"}", `{"a":"line one\nline two"}`},
		{"braces inside strings", `Answer: {"a": "}{][", "b": {"c": ["]"]}} end`, `{"a":"}{][","b":{"c":["]"]}}`},
		{"escaped quote inside string", `x {"a": "say \"{hi}\""} y`, `{"a":"say \"{hi}\""}`},
		{"top-level array", `[{"idx": 0}, {"idx": 1}]`, `[{"idx":0},{"idx":1}]`},
		{"array in prose", `The scenes are: [{"scene_name": "s1"}].`, `[{"scene_name":"s1"}]`},
		{"truncated object", `{"decisions": [{"record_id": "m1", "action": "store"`, `{"decisions":[{"record_id":"m1","action":"store"}]}`},
		{"truncated after key", `{"a": 1, "b`, `{"a":1,"b":null}`},
		{"truncated after colon", `{"a": 1, "b": `, `{"a":1,"b":null}`},
		{"truncated inside escape", `{"a": ["cut \`, `{"a":["cut \\"]}`},
		{"truncated with trailing comma", "```json\n{\"scores\": [{\"idx\": 0},", `{"scores":[{"idx":0}]}`},
		{"single quotes", `{'a': 'b'}`, `{"a":"b"}`},
		{"chinese text", `结果如下：{"content": "用户喜欢深色模式"}`, `{"content":"用户喜欢深色模式"}`},
		{"no json", "I cannot help with that.", ""},
		{"empty", "   ", ""},
		{"only brackets of prose", "see [1] and [2]", `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := llmjson.ExtractJSON(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ExtractJSON(%q) = %s, want an error", tt.in, got)
				}
				if !errors.Is(err, imprint.ErrLLMOutputMalformed) {
					t.Fatalf("error %v is not ErrLLMOutputMalformed", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ExtractJSON(%q): %v", tt.in, err)
			}
			if !json.Valid(got) {
				t.Fatalf("ExtractJSON(%q) = %s, not valid JSON", tt.in, got)
			}
			var gotV, wantV any
			if err := json.Unmarshal(got, &gotV); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &wantV); err != nil {
				t.Fatalf("bad want %q: %v", tt.want, err)
			}
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Errorf("ExtractJSON(%q) = %s; value diff (-want +got):\n%s", tt.in, got, diff)
			}
		})
	}
}

func TestExtractJSONLargeTruncatedReply(t *testing.T) {
	t.Parallel()
	// Far beyond the size handed to jsonrepair: the linear tidy pass must
	// still recover it.
	in := `{"decisions": [` + strings.Repeat(`{"record_id": "m1", "action": "store"}, `, 4000) + `{"record_id": "m2", "act`
	got, err := llmjson.ExtractJSON(in)
	if err != nil {
		t.Fatalf("ExtractJSON: %v", err)
	}
	var v struct {
		Decisions []map[string]any `json:"decisions"`
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Decisions) != 4001 {
		t.Errorf("got %d decisions, want 4001", len(v.Decisions))
	}
}

func BenchmarkExtractJSON(b *testing.B) {
	reply := "Here is the result:\n```json\n{\"scenes\": [" +
		strings.Repeat(`{"scene_name": "setup", "message_ids": ["m1", "m2"], "memories": [{"content": "The user prefers dark mode.", "type": "persona", "priority": 50, "source_message_ids": ["m1"]}]},`, 10) +
		"]}\n```"
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if _, err := llmjson.ExtractJSON(reply); err != nil {
			b.Fatal(err)
		}
	}
}

func TestExtractJSONRemovesLoneSurrogateEscapes(t *testing.T) {
	t.Parallel()
	// Go's decoder tolerates a lone surrogate, but other consumers
	// (PostgreSQL jsonb) reject it, so the raw text must not keep it.
	got, err := llmjson.ExtractJSON(`{"s": "a\uD800b", "t": "\udfff"}`)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.ToLower(string(got)); strings.Contains(s, `\ud800`) || strings.Contains(s, `\udfff`) {
		t.Errorf("ExtractJSON kept a lone surrogate escape: %s", got)
	}
}
