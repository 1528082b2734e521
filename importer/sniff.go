package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// Formats Sniff recognises. They are the names `imprint import --format`
// takes, except FormatTauBench, which the CLI's "openai" covers.
const (
	FormatClaudeCode = "claude-code"
	FormatOpenClaw   = "openclaw"
	FormatOpenAI     = "openai"
	FormatTauBench   = "tau-bench"
	FormatChatGPT    = "chatgpt"
	FormatLoCoMo     = "locomo"
	FormatImprint    = "imprint"
)

// SniffBytes is how much of a file's head Sniff should be given: enough for
// the first object's keys in every format.
const SniffBytes = 64 << 10

// Sniff guesses a transcript file's format from its name and its first bytes
// (head; SniffBytes is plenty, a shorter or cut-off head is fine). It looks
// at the keys of the first JSON object: a JSON array of objects with
// "mapping" is a ChatGPT export, with "traj" (or task_id and reward) τ-bench,
// with "qa" or "conversation" LoCoMo, with "role" or "messages" an OpenAI
// chat list; JSONL lines with "sessionId"/"parentUuid" are Claude Code, a
// first line of type "session" is OpenClaw; objects with "turns", or
// "messages" and "session_id", are imprint's own JSON. An unknown format is
// an error of kind ErrInvalid.
func Sniff(path string, head []byte) (string, error) {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	name := strings.ToLower(filepath.Base(path))
	if len(head) == 0 {
		return "", imprint.Invalidf("%s: cannot tell the transcript format of an empty file", path)
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	tok, err := dec.Token()
	if err != nil {
		return "", imprint.Invalidf("%s: not JSON: %s", path, syntaxAt(head, err))
	}
	switch tok {
	case json.Delim('['):
		tok, err = dec.Token()
		if err != nil {
			return "", imprint.Invalidf("%s: malformed JSON: %s", path, syntaxAt(head, err))
		}
		switch tok {
		case json.Delim('{'):
		case json.Delim('['):
			return FormatOpenAI, nil // a list of message lists
		case json.Delim(']'):
			return "", imprint.Invalidf("%s: an empty JSON array: no transcript in it", path)
		default:
			return "", imprint.Invalidf("%s: a JSON array of %s, not of transcript objects", path, jsonKind(tok))
		}
		keys := objectKeys(dec)
		switch {
		case keys.has("mapping"):
			return FormatChatGPT, nil
		case keys.has("traj"), keys.has("task_id") && (keys.has("reward") || keys.has("trial")):
			return FormatTauBench, nil
		case keys.has("qa"), keys.has("conversation"), keys.has("sample_id"):
			return FormatLoCoMo, nil
		case keys.has("turns"):
			return FormatImprint, nil
		case keys.has("messages") && keys.has("session_id"):
			return FormatImprint, nil
		case keys.has("messages"), keys.has("role"):
			return FormatOpenAI, nil
		case name == "conversations.json" && (keys.has("title") || keys.has("create_time") || keys.has("current_node")):
			return FormatChatGPT, nil
		}
	case json.Delim('{'):
		keys := objectKeys(dec)
		first, rest, _ := bytes.Cut(head, []byte("\n"))
		jsonl := strings.HasSuffix(name, ".jsonl") || (json.Valid(bytes.TrimSpace(first)) && len(bytes.TrimSpace(rest)) > 0)
		typ := keys["type"]
		switch {
		case typ == `"session"`, typ == `"message"` && keys.has("parentId"):
			return FormatOpenClaw, nil
		case keys.has("sessionId"), keys.has("parentUuid"), keys.has("leafUuid"),
			typ == `"file-history-snapshot"`, typ == `"summary"`,
			(typ == `"user"` || typ == `"assistant"`) && keys.has("message") && jsonl:
			return FormatClaudeCode, nil
		case keys.has("mapping"):
			return FormatChatGPT, nil
		case keys.has("traj"):
			return FormatTauBench, nil
		case keys.has("qa"), keys.has("conversation") && keys.has("sample_id"):
			return FormatLoCoMo, nil
		case keys.has("turns"):
			return FormatImprint, nil
		case keys.has("messages") && keys.has("session_id"):
			return FormatImprint, nil
		case keys.has("messages"):
			return FormatOpenAI, nil
		case keys.has("role") && (keys.has("tool_calls") || keys.has("tool_call_id")):
			return FormatOpenAI, nil
		case keys.has("role") && jsonl:
			return FormatImprint, nil // a §4.2 message stream
		case keys.has("role"):
			return FormatOpenAI, nil
		case keys.has("session_id"):
			return FormatImprint, nil
		}
	}
	if err := firstValueError(head); err != nil {
		return "", imprint.Invalidf("%s: malformed JSON: %s", path, syntaxAt(head, err))
	}
	return "", imprint.Invalidf("%s: unknown transcript format (give --format)", path)
}

// firstValueError is the syntax error of head's first JSON value, or nil
// when it is whole or merely cut off where head ends.
func firstValueError(head []byte) error {
	var v json.RawMessage
	err := json.NewDecoder(bytes.NewReader(head)).Decode(&v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return err
	}
	return nil
}

// syntaxAt says what is wrong with JSON and where: "line 2, column 5:
// invalid character '}' …" for a syntax error in head.
func syntaxAt(head []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset <= 0 || se.Offset > int64(len(head)) {
		return err.Error()
	}
	before := head[:se.Offset-1]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := 1 + len(before) - (bytes.LastIndexByte(before, '\n') + 1)
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// jsonKind names the kind of a JSON token: "strings", "numbers", …
func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case string:
		return "strings"
	case float64, json.Number:
		return "numbers"
	case bool:
		return "booleans"
	case nil:
		return "nulls"
	}
	return "values"
}

// sniffKeys maps the top-level keys of an object to their value when it is
// a scalar (JSON text, e.g. `"session"`), or "{" / "[" for a composite.
type sniffKeys map[string]string

func (k sniffKeys) has(key string) bool { _, ok := k[key]; return ok }

// objectKeys reads the rest of the object whose '{' dec just returned and
// collects its top-level keys, as far as the input goes.
func objectKeys(dec *json.Decoder) sniffKeys {
	keys := sniffKeys{}
	depth, key, wantKey := 1, "", true
	for {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if depth == 1 && !wantKey {
					keys[key] = string(d)
				}
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return keys
				}
				if depth == 1 {
					wantKey = true
				}
			}
			continue
		}
		if depth != 1 {
			continue
		}
		if wantKey {
			key, _ = tok.(string)
			keys[key] = ""
			wantKey = false
			continue
		}
		b, _ := json.Marshal(tok)
		keys[key] = string(b)
		wantKey = true
	}
}
