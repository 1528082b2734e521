package llmjson

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/imprint-dev/imprint"
)

func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": 1}`,
		"```json\n{\"a\": [1, 2,]}\n```",
		`Here: {"scores": [{"idx": 0}]} done`,
		`{"p": "C:\q", "s": "\ud800", "t": "\ud83d\ude00"}`,
		`[1, 2`,
		`{'a': 'b'}`,
		`{"a": "}{]["}`,
		"{\"a\": \"x\ny\"}",
		`see [1] and {x}`,
		`{"a": "\u12`,
		`"just a string"`,
		``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ExtractJSON(s)
		if err != nil {
			if !errors.Is(err, imprint.ErrLLMOutputMalformed) {
				t.Fatalf("error %v is not ErrLLMOutputMalformed", err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("ExtractJSON(%q) = %q, not valid JSON", s, got)
		}
	})
}
