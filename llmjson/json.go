package llmjson

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/imprint-dev/imprint"
	"github.com/kaptinlin/jsonrepair"
)

// maxCandidates bounds how many top-level {…} / […] spans ExtractJSON
// tries, and maxScans how many start positions it scans from, so a reply
// full of brackets costs linear time.
const (
	maxCandidates = 16
	maxScans      = 64
)

// errNoJSON is the message shown to the model when its reply holds no JSON.
var errNoJSON = errors.New("the reply contains no JSON object or array")

// ExtractJSON finds the JSON value in a model's reply. It tries, in order:
// the whole reply as strict JSON; the first balanced {…} or […] span that is
// valid (skipping code fences and prose, respecting strings and escapes);
// the same spans and then the whole reply repaired (trailing commas, single
// quotes, unquoted keys, truncation, via github.com/kaptinlin/jsonrepair).
// Before checking a span, invalid escapes are fixed: a lone UTF-16 surrogate
// becomes U+FFFD, an unknown escape such as \q keeps its backslash as a
// literal one, and raw control characters inside strings are escaped.
// The result is always valid JSON. When nothing parses, the error wraps
// imprint.ErrLLMOutputMalformed.
func ExtractJSON(text string) (json.RawMessage, error) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil, fmt.Errorf("%w: the reply is empty", imprint.ErrLLMOutputMalformed)
	}
	if trimmed[0] == '{' || trimmed[0] == '[' {
		if fixed := fixStrings(trimmed); json.Valid([]byte(fixed)) {
			return json.RawMessage(fixed), nil
		}
	}
	spans := candidates(text)
	for _, s := range spans {
		if fixed := fixStrings(s); json.Valid([]byte(fixed)) {
			return json.RawMessage(fixed), nil
		}
	}
	for _, s := range spans {
		if t := tidy(fixStrings(s)); json.Valid([]byte(t)) {
			return json.RawMessage(t), nil
		}
	}
	for _, s := range spans {
		if out, ok := repair(s); ok {
			return out, nil
		}
	}
	if out, ok := repair(trimmed); ok && (out[0] == '{' || out[0] == '[') {
		return out, nil
	}
	// A bare scalar is valid JSON but never what an op asks for; accept it
	// last so that decode can report what is wrong with it.
	if json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed), nil
	}
	if len(spans) == 0 {
		return nil, fmt.Errorf("%w: %v", imprint.ErrLLMOutputMalformed, errNoJSON)
	}
	return nil, fmt.Errorf("%w: the reply's JSON could not be parsed or repaired", imprint.ErrLLMOutputMalformed)
}

// Limits on what is handed to jsonrepair, whose running time grows with the
// square of the input (and worse with nesting depth). LLM replies of
// imprint's ops are a few kilobytes.
const (
	maxRepairInput = 32 << 10
	maxRepairDepth = 64
)

// repair runs jsonrepair on s and fixes the strings of its output. It
// recovers from a panic in the third-party repairer: the input is untrusted.
func repair(s string) (out json.RawMessage, ok bool) {
	if len(s) > maxRepairInput || depth(s) > maxRepairDepth {
		return nil, false
	}
	defer func() {
		if recover() != nil {
			out, ok = nil, false
		}
	}()
	r, err := jsonrepair.Repair(fixStrings(s))
	if err != nil {
		return nil, false
	}
	r = strings.TrimSpace(fixStrings(r))
	if r == "" || !json.Valid([]byte(r)) {
		return nil, false
	}
	return json.RawMessage(r), true
}

// depth returns the deepest bracket nesting of s, ignoring strings.
func depth(s string) int {
	d, deepest := 0, 0
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// tidy makes the two most common faults of a model's JSON valid in linear
// time: commas before a closing bracket, and a reply cut off before its end
// (an open string is closed, a dangling comma dropped, a key left without a
// value gets null, open brackets are closed). It returns s unchanged when
// it finds anything else wrong; jsonrepair gets the rest.
func tidy(s string) string {
	buf := make([]byte, 0, len(s)+16)
	var stack []byte     // expected closers
	var wantValue []bool // per open object: a colon was seen, value pending
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			buf = append(buf, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			stack = append(stack, '}')
			wantValue = append(wantValue, false)
		case '[':
			stack = append(stack, ']')
		case ':':
			if len(stack) > 0 && stack[len(stack)-1] == '}' {
				wantValue[len(wantValue)-1] = true
			}
		case ',':
			if len(stack) > 0 && stack[len(stack)-1] == '}' {
				wantValue[len(wantValue)-1] = false
			}
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return s
			}
			buf = dropTrailingComma(buf)
			stack = stack[:len(stack)-1]
			if c == '}' {
				wantValue = wantValue[:len(wantValue)-1]
			}
		}
		buf = append(buf, c)
	}
	if len(stack) == 0 && !inStr {
		return string(buf)
	}
	if inStr {
		if esc {
			buf = buf[:len(buf)-1]
		}
		buf = append(buf, '"')
	}
	buf = dropTrailingComma(buf)
	if len(stack) > 0 && stack[len(stack)-1] == '}' {
		last := lastNonSpace(buf)
		switch {
		case last >= 0 && buf[last] == ':':
			buf = append(buf, "null"...)
		case last >= 0 && buf[last] == '"' && !wantValue[len(wantValue)-1]:
			buf = append(buf, ":null"...)
		}
	}
	for i := len(stack) - 1; i >= 0; i-- {
		buf = append(buf, stack[i])
	}
	return string(buf)
}

func lastNonSpace(b []byte) int {
	i := len(b) - 1
	for i >= 0 && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i--
	}
	return i
}

// dropTrailingComma removes a comma that is the last non-space byte of b.
func dropTrailingComma(b []byte) []byte {
	i := lastNonSpace(b)
	if i < 0 || b[i] != ',' {
		return b
	}
	return append(b[:i], b[i+1:]...)
}

// candidates returns up to maxCandidates non-overlapping spans of text that
// start with { or [ and end at the matching bracket. A span still open at
// the end of the text (a truncated reply) runs to the end. A span whose
// brackets do not match is dropped and the search resumes after its start.
func candidates(text string) []string {
	var out []string
	for i, scans := 0, 0; i < len(text) && len(out) < maxCandidates && scans < maxScans; scans++ {
		j := strings.IndexAny(text[i:], "{[")
		if j < 0 {
			break
		}
		start := i + j
		end, ok := matchBracket(text, start)
		switch {
		case !ok:
			i = start + 1
		case end < 0:
			out = append(out, text[start:])
			i = len(text)
		default:
			out = append(out, text[start:end+1])
			i = end + 1
		}
	}
	return out
}

// matchBracket returns the index of the bracket closing the one at start,
// -1 when the text ends first, or ok=false when a closing bracket does not
// match. Brackets inside double-quoted strings are ignored.
func matchBracket(text string, start int) (end int, ok bool) {
	var stack []byte
	inStr, esc := false, false
	for i := start; i < len(text); i++ {
		c := text[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if stack[len(stack)-1] != c {
				return 0, false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i, true
			}
		}
	}
	return -1, true
}

// fixStrings rewrites the inside of every double-quoted string of s so that
// it is valid JSON: unknown escapes get their backslash escaped, \u escapes
// naming a lone surrogate become \ufffd, and raw control characters are
// escaped. Text outside strings is copied unchanged.
func fixStrings(s string) string {
	if !needsFix(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !inStr {
			if c == '"' {
				inStr = true
			}
			b.WriteByte(c)
			continue
		}
		switch {
		case c == '"':
			inStr = false
			b.WriteByte(c)
		case c < 0x20:
			writeControl(&b, c)
		case c != '\\':
			b.WriteByte(c)
		case i+1 >= len(s):
			b.WriteString(`\\`)
		default:
			n := s[i+1]
			switch n {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				b.WriteByte('\\')
				b.WriteByte(n)
				i++
			case 'u':
				i += writeUnicodeEscape(&b, s, i)
			default:
				// Keep the backslash as a literal one; the next byte is
				// handled on the next turn of the loop.
				b.WriteString(`\\`)
			}
		}
	}
	return b.String()
}

// needsFix reports whether s has a backslash or a control character, the
// only things fixStrings changes.
func needsFix(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' || s[i] < 0x20 {
			return true
		}
	}
	return false
}

func writeControl(b *strings.Builder, c byte) {
	switch c {
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	default:
		fmt.Fprintf(b, `\u%04x`, c)
	}
}

// writeUnicodeEscape handles the \u escape starting at s[i] (the backslash)
// and returns how many bytes beyond s[i] it consumed.
func writeUnicodeEscape(b *strings.Builder, s string, i int) int {
	r, ok := hex4(s, i+2)
	if !ok {
		b.WriteString(`\\`)
		return 0
	}
	switch {
	case r >= 0xD800 && r <= 0xDBFF:
		if lo, ok := hex4(s, i+8); ok && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
			b.WriteString(s[i : i+12])
			return 11
		}
		b.WriteString(`\ufffd`)
	case r >= 0xDC00 && r <= 0xDFFF:
		b.WriteString(`\ufffd`)
	default:
		b.WriteString(s[i : i+6])
	}
	return 5
}

// hex4 decodes the four hex digits at s[i:i+4].
func hex4(s string, i int) (rune, bool) {
	if i < 0 || i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// maxRepairEcho bounds how much of a bad reply is sent back in the repair
// retry.
const maxRepairEcho = 16000

// CompleteJSON runs a JSON op: it sets req.JSON, calls m, extracts the JSON
// of the reply and passes it to decode, which unmarshals and validates it
// and whose error message is shown to the model. When extraction or decode
// fails, it sends one repair retry under the same op (the original
// conversation, the bad reply, and a user message with the error asking for
// corrected JSON only). The returned response carries the text of the last
// reply and the tokens of both attempts. Provider errors are returned as
// they are; a reply still bad after the retry is an error of kind
// imprint.ErrLLMOutputMalformed.
func CompleteJSON(ctx context.Context, m imprint.LLM, req imprint.LLMRequest, decode func(raw json.RawMessage) error) (imprint.LLMResponse, error) {
	req.JSON = true
	resp, err := m.Complete(ctx, req)
	if err != nil {
		return resp, err
	}
	perr := decodeReply(resp.Text, decode)
	if perr == nil {
		return resp, nil
	}

	bad := resp.Text
	if len(bad) > maxRepairEcho {
		bad = truncateUTF8(bad, maxRepairEcho)
	}
	retry := req
	retry.Messages = make([]imprint.ChatMessage, 0, len(req.Messages)+2)
	retry.Messages = append(retry.Messages, req.Messages...)
	retry.Messages = append(retry.Messages,
		imprint.ChatMessage{Role: "assistant", Content: bad},
		imprint.ChatMessage{Role: "user", Content: repairPrompt(perr)},
	)
	// The repair finishes the work of the first call (--max-llm-calls).
	resp2, err := m.Complete(imprint.Continuing(ctx), retry)
	total := resp2
	total.PromptTokens += resp.PromptTokens
	total.CompletionTokens += resp.CompletionTokens
	if total.Model == "" {
		total.Model = resp.Model
	}
	if err != nil {
		return total, err
	}
	if perr2 := decodeReply(resp2.Text, decode); perr2 != nil {
		// %v, not %w, for the decode error: its kind (often ErrInvalid)
		// must not hide that the model's output is at fault.
		return total, fmt.Errorf("llm %s: reply still unusable after a repair retry: %w: %s", req.Op, imprint.ErrLLMOutputMalformed, problem(perr2))
	}
	return total, nil
}

// decodeReply extracts the JSON of text and decodes it.
func decodeReply(text string, decode func(json.RawMessage) error) error {
	raw, err := ExtractJSON(text)
	if err != nil {
		return err
	}
	return decode(raw)
}

// problem is err's message without the error-kind prefix ExtractJSON adds.
func problem(err error) string {
	return strings.TrimPrefix(err.Error(), imprint.ErrLLMOutputMalformed.Error()+": ")
}

func repairPrompt(err error) string {
	var b strings.Builder
	b.WriteString("Your previous reply could not be used: ")
	b.WriteString(problem(err))
	b.WriteString(".\nReply again with the corrected JSON only: one JSON value, no prose, no code fences.")
	return b.String()
}

func truncateUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
