package wire

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// episodeIn is a §4.1 episode as read; fields are checked one by one so an
// error can name the field.
type episodeIn struct {
	ID        string          `json:"id"`
	SessionID *string         `json:"session_id"`
	Scope     *imprint.Scope  `json:"scope"`
	Workspace string          `json:"workspace"`
	ClosedBy  string          `json:"closed_by"`
	Meta      json.RawMessage `json:"meta"`
	Turns     json.RawMessage `json:"turns"`
}

type turnIn struct {
	ID      string          `json:"id"`
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
	TS      json.RawMessage `json:"ts"`
	Meta    json.RawMessage `json:"meta"`
}

// ReadEpisodes reads §4.1 episodes: one episode JSON object, a JSON array of
// them, or JSONL (one per line). A turn's content may be a string or an
// array of {"type":"text","text"} parts (joined by newlines; other parts are
// skipped with a warning); ts is an RFC 3339 string or epoch milliseconds,
// and a turn without one gets its predecessor's. An episode without id keeps
// it empty: capture derives it from scope, session and first turn. Any
// unusable episode (no session_id, no turns, an unknown role or closed_by,
// a malformed time or JSON) fails the whole read with an error of kind
// ErrInvalid naming the field, e.g. `episodes[2].turns[0].role: unknown role
// "bot"`, so nothing of a bad file is captured.
func ReadEpisodes(r io.Reader, file string) ([]imprint.Episode, []Warning, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", file, err)
	}
	return readEpisodes(data, file, false)
}

// readEpisodes reads §4.1 episodes from data. With lenient, a malformed
// JSONL line or an unusable episode of a JSONL stream or array is skipped
// with a warning naming file and line; only input with nothing usable is
// an error.
func readEpisodes(data []byte, file string, lenient bool) ([]imprint.Episode, []Warning, error) {
	items, warnings, err := splitDocument(data, file, "episodes", lenient)
	if err != nil {
		return nil, nil, err
	}
	return parseEpisodes(items, warnings, file, lenient)
}

// parseEpisodes is readEpisodes on the items of a split document and the
// warnings of the split.
func parseEpisodes(items []docItem, warnings []Warning, file string, lenient bool) ([]imprint.Episode, []Warning, error) {
	var out []imprint.Episode
	var firstErr error
	for _, it := range items {
		ep, ws, err := parseEpisode(it, file)
		if err != nil {
			if !lenient || it.label == "" {
				return nil, nil, err
			}
			firstErr = cmp.Or(firstErr, err)
			warnings = append(warnings, skipped(file, it, "episode", err))
			continue
		}
		warnings = append(warnings, ws...)
		out = append(out, ep)
	}
	if len(out) == 0 && firstErr != nil {
		return nil, nil, firstErr
	}
	return out, warnings, nil
}

func parseEpisode(it docItem, file string) (imprint.Episode, []Warning, error) {
	fail := func(name, format string, args ...any) error {
		return Invalid(file, Field(it.label, name), fmt.Sprintf(format, args...))
	}
	var in episodeIn
	if raw := bytes.TrimSpace(it.raw); len(raw) == 0 || raw[0] != '{' {
		return imprint.Episode{}, nil, Invalid(file, it.label, "an episode must be a JSON object")
	}
	if err := json.Unmarshal(it.raw, &in); err != nil {
		return imprint.Episode{}, nil, Invalid(file, it.label, "malformed episode: "+jsonErrField(err))
	}
	if in.SessionID == nil || strings.TrimSpace(*in.SessionID) == "" {
		return imprint.Episode{}, nil, fail("session_id", "required")
	}
	ep := imprint.Episode{ID: strings.TrimSpace(in.ID), SessionID: strings.TrimSpace(*in.SessionID)}
	if err := CheckID(file, Field(it.label, "session_id"), ep.SessionID); err != nil {
		return imprint.Episode{}, nil, err
	}
	if err := CheckID(file, Field(it.label, "id"), ep.ID); err != nil {
		return imprint.Episode{}, nil, err
	}
	ep.Workspace = strings.TrimSpace(in.Workspace)
	if err := CheckID(file, Field(it.label, "workspace"), ep.Workspace); err != nil {
		return imprint.Episode{}, nil, err
	}
	if in.Scope != nil {
		ep.Scope = *in.Scope
		if err := CheckScope(file, it.label, ep.Scope); err != nil {
			return imprint.Episode{}, nil, err
		}
	}
	switch imprint.ClosedBy(in.ClosedBy) {
	case "":
		ep.ClosedBy = imprint.ClosedFinalized
	case imprint.ClosedFinalized, imprint.ClosedAbandoned:
		ep.ClosedBy = imprint.ClosedBy(in.ClosedBy)
	default:
		return imprint.Episode{}, nil, fail("closed_by", "must be finalized or abandoned, not %q", in.ClosedBy)
	}
	if m := bytes.TrimSpace(in.Meta); len(m) > 0 && string(m) != "null" {
		if err := json.Unmarshal(m, &ep.Meta); err != nil {
			return imprint.Episode{}, nil, fail("meta", "%s", jsonErrField(err))
		}
	}
	var turns []json.RawMessage
	if t := bytes.TrimSpace(in.Turns); len(t) == 0 || string(t) == "null" {
		return imprint.Episode{}, nil, fail("turns", "required")
	} else if t[0] != '[' || json.Unmarshal(t, &turns) != nil {
		return imprint.Episode{}, nil, fail("turns", "must be a list of turns")
	}
	if len(turns) == 0 {
		return imprint.Episode{}, nil, fail("turns", "must not be empty")
	}
	var warnings []Warning
	var prev imprint.Time
	for i, raw := range turns {
		name := fmt.Sprintf("turns[%d]", i)
		var tin turnIn
		if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &tin) != nil {
			return imprint.Episode{}, nil, fail(name, "must be a turn object {role, content, ts, meta}")
		}
		if tin.Role == nil || *tin.Role == "" {
			return imprint.Episode{}, nil, fail(name+".role", "required")
		}
		role := imprint.Role(*tin.Role)
		if !role.Valid() {
			return imprint.Episode{}, nil, fail(name+".role", "unknown role %q", *tin.Role)
		}
		content, skipped, err := partsText(tin.Content)
		if err != nil {
			return imprint.Episode{}, nil, fail(name+".content", "%v", err)
		}
		if skipped > 0 {
			warnings = append(warnings, Warning{File: file, Line: it.line,
				Message: Field(it.label, name+".content") + fmt.Sprintf(": %d non-text part(s) skipped", skipped)})
		}
		t := imprint.Turn{ID: strings.TrimSpace(tin.ID), Role: role, Content: content}
		if err := CheckID(file, Field(it.label, name+".id"), t.ID); err != nil {
			return imprint.Episode{}, nil, err
		}
		if len(tin.TS) > 0 {
			if err := t.TS.UnmarshalJSON(tin.TS); err != nil {
				return imprint.Episode{}, nil, fail(name+".ts", "%v", err)
			}
		}
		if t.TS.IsZero() {
			t.TS = prev
		}
		prev = t.TS
		if m := bytes.TrimSpace(tin.Meta); len(m) > 0 && string(m) != "null" {
			if err := json.Unmarshal(m, &t.Meta); err != nil {
				return imprint.Episode{}, nil, fail(name+".meta", "%s", jsonErrField(err))
			}
		}
		ep.Turns = append(ep.Turns, t)
	}
	SetTimes(&ep)
	return ep, warnings, nil
}

// jsonErrField turns a decoding error into a short message naming the field
// when encoding/json knows it.
func jsonErrField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s: expected %s, got %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}

// partsText reads content given as a string, null, or an array of
// {"type":"text","text"} parts (joined by newlines). skipped counts parts of
// other types.
func partsText(raw json.RawMessage) (text string, skipped int, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, nil
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", 0, errors.New("malformed string")
		}
		return text, 0, nil
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", 0, errors.New("malformed list of parts")
		}
		var texts []string
		for i, p := range parts {
			var s string
			if json.Unmarshal(p, &s) == nil {
				texts = append(texts, s)
				continue
			}
			var part struct {
				Type string  `json:"type"`
				Text *string `json:"text"`
			}
			if json.Unmarshal(p, &part) != nil {
				return "", 0, fmt.Errorf("part %d is not a {\"type\":\"text\",\"text\"} object", i)
			}
			if (part.Type == "text" || part.Type == "") && part.Text != nil {
				texts = append(texts, *part.Text)
				continue
			}
			skipped++
		}
		return strings.Join(texts, "\n"), skipped, nil
	}
	return "", 0, errors.New("must be a string or a list of text parts")
}

// SetTimes sets StartedAt and EndedAt from the first and last turns
// that have a time.
func SetTimes(ep *imprint.Episode) {
	ep.StartedAt, ep.EndedAt = imprint.Time{}, imprint.Time{}
	for _, t := range ep.Turns {
		if t.TS.IsZero() {
			continue
		}
		if ep.StartedAt.IsZero() {
			ep.StartedAt = t.TS
		}
		ep.EndedAt = t.TS
	}
}
