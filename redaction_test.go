package imprint

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRedactTurnsToolInput: a secret in a tool input is found inside the
// decoded JSON strings, even after an escaped newline that would hide its
// start in the raw text, and in numbers; an input without secrets keeps
// its bytes.
func TestRedactTurnsToolInput(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-0123"
	// fn redacts the secret only at a line start, as word-start rules do.
	fn := func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, secret) {
				lines[i] = "[REDACTED]" + strings.TrimPrefix(l, secret)
			}
		}
		out := strings.Join(lines, "\n")
		return strings.ReplaceAll(out, "4111111111111111", "[REDACTED]")
	}
	for _, tc := range []struct {
		name, in string
		want     string // a substring of the output
	}{
		{"escaped newline", `{"cmd": "cat <<EOF\n` + secret + `\nEOF"}`, `"cat <<EOF\n[REDACTED]\nEOF"`},
		{"nested", `{"args": [{"env": "` + secret + ` x"}], "n": 1.50}`, `"env":"[REDACTED] x"`},
		{"number", `{"card": 4111111111111111}`, `"card":"[REDACTED]"`},
		{"not json", secret + ` and more`, `"[REDACTED] and more"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := RedactTurns([]Turn{{Role: RoleTool, Meta: TurnMeta{Input: json.RawMessage(tc.in)}}}, fn)
			out := string(got[0].Meta.Input)
			if strings.Contains(out, secret) || strings.Contains(out, "4111111111111111") || !strings.Contains(out, tc.want) || !json.Valid(got[0].Meta.Input) {
				t.Errorf("input %s redacted to %s, want valid JSON holding %s", tc.in, out, tc.want)
			}
		})
	}
	clean := `{"b": 2,  "a": "plain"}`
	got := RedactTurns([]Turn{{Role: RoleTool, Meta: TurnMeta{Input: json.RawMessage(clean)}}}, fn)
	if string(got[0].Meta.Input) != clean {
		t.Errorf("input without secrets changed: %s", got[0].Meta.Input)
	}
}

// FuzzRedactJSON: whatever the tool input, its redaction is valid JSON
// when a change was made, the input itself when fn changes nothing, and
// no "SECRET" survives a redactor that removes it.
func FuzzRedactJSON(f *testing.F) {
	f.Add(`{"cmd": "echo SECRET\n"}`)
	f.Add(`[1, 2.5e3, "SECRET", {"SECRET": null}]`)
	f.Add(`"SECRET"`)
	f.Add(`{"a": 1} {"b": 2}`)
	f.Add(`not json SECRET`)
	f.Add(`0]SECRET`)
	fn := func(s string) string { return strings.ReplaceAll(s, "SECRET", "[R]") }
	f.Fuzz(func(t *testing.T, in string) {
		if in == "" {
			return
		}
		same := redactJSON(json.RawMessage(in), func(s string) string { return s })
		if string(same) != in {
			t.Fatalf("an identity redactor changed %q to %q", in, same)
		}
		out := redactJSON(json.RawMessage(in), fn)
		if string(out) != in && !json.Valid(out) {
			t.Fatalf("redacted %q to invalid JSON %q", in, out)
		}
		var v any
		if json.Unmarshal(out, &v) == nil {
			b, _ := json.Marshal(v)
			if strings.Contains(string(b), "SECRET") {
				t.Fatalf("SECRET survived in %q", out)
			}
		} else if strings.Contains(string(out), "SECRET") {
			t.Fatalf("SECRET survived in %q", out)
		}
	})
}
