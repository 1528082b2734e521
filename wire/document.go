package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	imprint "github.com/imprint-dev/imprint"
)

// Warning reports one piece of input that could not be imported; the rest of
// the file still is.
type Warning struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// docItem is one JSON value of an input document and where it came from.
type docItem struct {
	raw   json.RawMessage
	label string // "episodes[2]", "line 3", or "" for a single object
	// line is the line reported with the item's warnings (0 for a single
	// object); start is the line on which raw starts.
	line, start int
	// pos is the item's place among the document's values, counting the
	// malformed lines a lenient read skipped, so that it does not change
	// when such a line is mended.
	pos int
	// elem marks an element of a top-level array, labelled by
	// splitDocument's arrayName and its pos.
	elem bool
}

// relabel names the array elements of items as elements of arrayName.
func relabel(items []docItem, arrayName string) {
	for i := range items {
		if items[i].elem {
			items[i].label = fmt.Sprintf("%s[%d]", arrayName, items[i].pos)
		}
	}
}

// splitDocument reads one JSON object, a JSON array, or JSONL. arrayName
// labels array elements ("episodes" → "episodes[2]"). Array elements and
// JSONL lines carry the line they start on. A malformed JSONL line is an
// error naming the line; with lenient it is a warning naming file and line
// instead, and the other lines are still read.
func splitDocument(data []byte, file, arrayName string, lenient bool) ([]docItem, []Warning, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	// Lines are counted in the file as given: blank lines trimmed off the
	// front still count.
	rest := bytes.TrimLeftFunc(data, unicode.IsSpace)
	lead := bytes.Count(data[:len(data)-len(rest)], []byte("\n"))
	data = bytes.TrimRightFunc(rest, unicode.IsSpace)
	if len(data) == 0 {
		return nil, nil, Invalid(file, "", "empty input")
	}
	if json.Valid(data) {
		if err := CheckDocument(data, file); err != nil {
			return nil, nil, err
		}
		switch data[0] {
		case '{':
			return []docItem{{raw: data, start: lead + 1}}, nil, nil
		case '[':
			var elems []json.RawMessage
			if err := json.Unmarshal(data, &elems); err != nil {
				return nil, nil, Invalid(file, "", err.Error())
			}
			lines := elementLines(data, "")
			items := make([]docItem, len(elems))
			for i, e := range elems {
				items[i] = docItem{raw: e, label: fmt.Sprintf("%s[%d]", arrayName, i), pos: i, elem: true}
				if i < len(lines) {
					items[i].line = lead + lines[i]
					items[i].start = items[i].line
				}
			}
			return items, nil, nil
		}
		return nil, nil, Invalid(file, "", "expected a JSON object, an array or JSONL")
	}
	if !looksLikeJSONL(data, lenient) {
		// Not JSONL either: report where the document breaks.
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset > 0 && se.Offset <= int64(len(data)) {
			line := lead + 1 + bytes.Count(data[:se.Offset-1], []byte("\n"))
			return nil, nil, Invalid(file, "line "+strconv.Itoa(line), "malformed JSON: "+se.Error())
		}
		return nil, nil, Invalid(file, "", "malformed JSON")
	}
	var items []docItem
	var warnings []Warning
	var bad error
	pos := 0
	err := EachLine(bytes.NewReader(data), func(n int, raw []byte, tooLong bool) {
		if bad != nil {
			return
		}
		n += lead
		label := "line " + strconv.Itoa(n)
		problem := ""
		switch raw = bytes.TrimSpace(raw); {
		case tooLong:
			problem = "line too long"
		case len(raw) == 0:
			return
		case !json.Valid(raw):
			problem = "malformed JSON"
		default:
			problem = LineProblem(raw)
		}
		pos++
		if problem == "" {
			items = append(items, docItem{raw: append(json.RawMessage(nil), raw...), label: label, line: n, start: n, pos: pos - 1})
			return
		}
		if !lenient {
			bad = Invalid(file, label, problem)
			return
		}
		warnings = append(warnings, Warning{File: file, Line: n, Message: problem + ": line skipped"})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", file, err)
	}
	if bad != nil {
		return nil, nil, bad
	}
	return items, warnings, nil
}

// looksLikeJSONL reports whether data, which is not one JSON value, is read
// as JSONL: its first line is a JSON value, or (lenient) at least half of
// its non-blank lines are JSON objects, so a JSONL file whose first line is
// broken still imports while a broken pretty-printed document (lines like
// `{` and `"key": 1,`) does not pass for one.
func looksLikeJSONL(data []byte, lenient bool) bool {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if json.Valid(bytes.TrimSpace(first)) {
		return true
	}
	if !lenient {
		return false
	}
	lines, objects := 0, 0
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		lines++
		if line[0] == '{' && json.Valid(line) {
			objects++
		}
	}
	return objects > 0 && 2*objects >= lines
}

// elementLines returns the line (1-based, within data) on which each
// element starts of the JSON array data (key "") or of the array under key
// in the JSON object data. It returns what it found before any problem.
func elementLines(data []byte, key string) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	if key != "" {
		if tok != json.Delim('{') {
			return nil
		}
		for {
			if !dec.More() {
				return nil
			}
			k, err := dec.Token()
			if err != nil {
				return nil
			}
			if k == key {
				if tok, err = dec.Token(); err != nil {
					return nil
				}
				break
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
	}
	if tok != json.Delim('[') {
		return nil
	}
	var lines []int
	for dec.More() {
		off := int(dec.InputOffset())
		for off < len(data) && (data[off] == ',' || unicode.IsSpace(rune(data[off]))) {
			off++
		}
		lines = append(lines, 1+bytes.Count(data[:min(off, len(data))], []byte("\n")))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return lines
}

// skipped returns the warning for an item of a lenient read that was
// skipped for err (whose message names file, as invalidAt makes it).
func skipped(file string, it docItem, what string, err error) Warning {
	msg := err.Error()
	if file != "" && file != "-" {
		msg = strings.TrimPrefix(msg, file+": ")
	}
	return Warning{File: file, Line: it.line, Message: what + " skipped: " + msg}
}

// Invalid returns an ErrInvalid error naming file and field path.
func Invalid(file, path, msg string) error {
	var where []string
	if file != "" && file != "-" {
		where = append(where, file)
	}
	if path != "" {
		where = append(where, path)
	}
	if len(where) == 0 {
		return imprint.Invalidf("%s", msg)
	}
	return imprint.Invalidf("%s: %s", strings.Join(where, ": "), msg)
}

// Field joins a label and a field name into a path: "episodes[2]" +
// "turns[0].role" → "episodes[2].turns[0].role"; a line label reads
// "line 3: turns[0].role".
func Field(label, name string) string {
	switch {
	case label == "":
		return name
	case strings.HasPrefix(label, "line "):
		return label + ": " + name
	default:
		return label + "." + name
	}
}

// HasKey reports whether raw is a JSON object with the key.
func HasKey(raw json.RawMessage, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}
