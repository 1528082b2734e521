package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
)

// rawScene is one scene of an OpExtract reply, fields kept raw so that one
// badly typed field does not lose the others.
type rawScene struct {
	SceneName  json.RawMessage   `json:"scene_name"`
	MessageIDs json.RawMessage   `json:"message_ids"`
	Memories   []json.RawMessage `json:"memories"`
}

type rawMemory struct {
	Content          json.RawMessage `json:"content"`
	Type             json.RawMessage `json:"type"`
	Priority         json.RawMessage `json:"priority"`
	SourceMessageIDs json.RawMessage `json:"source_message_ids"`
	Metadata         json.RawMessage `json:"metadata"`
}

// decodeScenes reads an OpExtract reply: an object with "scenes", a bare
// array of scenes, or a single scene object. An error makes the LLM client
// send its one repair retry.
func decodeScenes(raw json.RawMessage) ([]rawScene, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty reply")
	}
	var items []json.RawMessage
	switch raw[0] {
	case '[':
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("scenes: %w", err)
		}
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("reply: %w", err)
		}
		switch {
		case obj["scenes"] != nil:
			if string(bytes.TrimSpace(obj["scenes"])) == "null" {
				return nil, nil
			}
			if err := json.Unmarshal(obj["scenes"], &items); err != nil {
				return nil, fmt.Errorf("scenes must be an array of scene objects: %w", err)
			}
		case obj["memories"] != nil || obj["scene_name"] != nil:
			items = []json.RawMessage{raw}
		default:
			return nil, fmt.Errorf(`reply has no "scenes" array`)
		}
	default:
		return nil, fmt.Errorf("reply is not a JSON object or array")
	}
	scenes := make([]rawScene, 0, len(items))
	for i, it := range items {
		var s rawScene
		if err := json.Unmarshal(it, &s); err != nil {
			return nil, fmt.Errorf("scene %d: %w", i, err)
		}
		scenes = append(scenes, s)
	}
	return scenes, nil
}

// extraction is what the pipeline keeps from one extractor run.
type extraction struct {
	// Memories are valid, capped and carry ids, in extraction order.
	Memories   []imprint.Memory
	SceneNames []string
	LastScene  string
	Warnings   []Warning
}

// scenesToCandidates turns decoded scenes into candidates, skipping memories
// whose type is unknown (with a warning) or whose content is empty.
func scenesToCandidates(scenes []rawScene, previousScene string) (cands []imprint.Candidate, names []string, last string, warns []Warning) {
	last = previousScene
	seen := map[string]bool{}
	for _, s := range scenes {
		name := sceneName(jsonString(s.SceneName))
		if name != "" {
			last = name
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		} else {
			name = last
		}
		sceneIDs := jsonStrings(s.MessageIDs)
		for _, rm := range s.Memories {
			var m rawMemory
			if err := json.Unmarshal(rm, &m); err != nil {
				warns = append(warns, Warning{Stage: "parse", Code: "memory_malformed", Message: err.Error()})
				continue
			}
			content := imprint.CleanText(jsonString(m.Content))
			if content == "" {
				continue
			}
			rawType := jsonString(m.Type)
			typ := imprint.MemoryType(strings.ToLower(strings.TrimSpace(rawType)))
			if !typ.Valid() {
				warns = append(warns, Warning{Stage: "parse", Code: "unknown_type",
					Message: fmt.Sprintf("memory of unknown type %q skipped", rawType)})
				continue
			}
			prio, ok := jsonInt(m.Priority)
			if !ok {
				prio = missingPriority
			}
			src := jsonStrings(m.SourceMessageIDs)
			if src == nil {
				src = sceneIDs
				if src == nil {
					src = []string{} // present but empty: attribute later
				}
			}
			cands = append(cands, imprint.Candidate{
				Content:          content,
				Type:             typ,
				Priority:         prio,
				SceneName:        name,
				SourceMessageIDs: src,
				Metadata:         decodeMetadata(m.Metadata),
			})
		}
	}
	return cands, names, last, warns
}

// missingPriority marks a candidate whose priority was not given; it
// becomes the type's floor.
const missingPriority = math.MinInt32

// validate applies the rules every extractor's output goes through:
// priorities (missing → the type's floor, above 100 → 100, instruction −1
// kept, other negatives and values below the floor dropped), sources
// restricted to the new messages, a fresh id per memory, and then the cap
// (capMemories). Source ids are read leniently ("[id]", quoted, several in
// one string). A memory citing background messages and no new one is
// dropped (it was extracted from earlier messages); one naming no id, or
// only ids that are in neither section (mangled by the model), is
// attributed to all new messages.
func validate(cands []imprint.Candidate, newMsgs, background []imprint.Message, maxMemories int) ([]imprint.Memory, []Warning) {
	newIDs := make(map[string]bool, len(newMsgs))
	allNew := make([]string, len(newMsgs))
	for i, m := range newMsgs {
		newIDs[m.ID] = true
		allNew[i] = m.ID
	}
	bgIDs := make(map[string]bool, len(background))
	for _, m := range background {
		bgIDs[m.ID] = true
	}
	var out []imprint.Memory
	var warns []Warning
	for _, c := range cands {
		if !c.Type.Valid() {
			warns = append(warns, Warning{Stage: "parse", Code: "unknown_type",
				Message: fmt.Sprintf("memory of unknown type %q skipped", c.Type)})
			continue
		}
		p, ok := normalizePriority(c.Type, c.Priority)
		if !ok {
			continue
		}
		src, citesBackground := filterSources(c.SourceMessageIDs, newIDs, bgIDs)
		if len(src) == 0 {
			if citesBackground {
				warns = append(warns, Warning{Stage: "parse", Code: "source_not_new",
					Message: fmt.Sprintf("memory citing only background messages skipped: %s", clampRunes(strings.Join(c.SourceMessageIDs, ", "), 200))})
				continue
			}
			if len(c.SourceMessageIDs) > 0 {
				warns = append(warns, Warning{Stage: "parse", Code: "source_unknown",
					Message: fmt.Sprintf("memory citing unknown message ids attributed to all new messages: %s", clampRunes(strings.Join(c.SourceMessageIDs, ", "), 200))})
			}
			src = append([]string(nil), allNew...)
		}
		out = append(out, imprint.Memory{
			ID:               imprint.NewID(),
			Content:          strings.TrimSpace(c.Content),
			Type:             c.Type,
			Priority:         p,
			SceneName:        c.SceneName,
			SourceMessageIDs: src,
			Metadata:         c.Metadata,
		})
	}
	out, capped := capMemories(out, maxMemories)
	if capped != nil {
		warns = append(warns, *capped)
	}
	return out, warns
}

// normalizePriority applies the priority rules; ok is false when the memory
// is dropped.
func normalizePriority(t imprint.MemoryType, p int) (int, bool) {
	switch {
	case p == missingPriority:
		return t.PriorityFloor(), true
	case p == -1 && t == imprint.MemoryInstruction:
		return -1, true
	case p < 0:
		return 0, false
	case p > 100:
		return 100, true
	case p < t.PriorityFloor():
		return 0, false
	}
	return p, true
}

// filterSources returns the ids of new messages among ids, in order and
// without repeats, and whether any id names a background message. An item
// that is not an id as given is tried without brackets or quotes, then
// split at commas, semicolons and spaces.
func filterSources(ids []string, newIDs, bgIDs map[string]bool) (out []string, citesBackground bool) {
	seen := map[string]bool{}
	try := func(id string) bool {
		id = strings.Trim(strings.TrimSpace(id), "[]\"'`")
		switch {
		case newIDs[id]:
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		case bgIDs[id]:
			citesBackground = true
		default:
			return false
		}
		return true
	}
	for _, id := range ids {
		if try(id) {
			continue
		}
		for _, part := range strings.FieldsFunc(id, func(r rune) bool {
			return r == ',' || r == ';' || r == '，' || unicode.IsSpace(r)
		}) {
			try(part)
		}
	}
	return out, citesBackground
}

// clampRunes cuts s to at most n runes, marking a cut with "…".
func clampRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func decodeMetadata(raw json.RawMessage) imprint.MemoryMetadata {
	var m struct {
		Start json.RawMessage `json:"activity_start_time"`
		End   json.RawMessage `json:"activity_end_time"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return imprint.MemoryMetadata{}
	}
	return imprint.MemoryMetadata{ActivityStartTime: isoTime(m.Start), ActivityEndTime: isoTime(m.End)}
}

// isoTime normalizes a model-given time to RFC 3339 UTC, or "" when it is
// missing or not a time.
func isoTime(raw json.RawMessage) string {
	var t imprint.Time
	if len(raw) == 0 || json.Unmarshal(raw, &t) != nil || t.IsZero() {
		return ""
	}
	return t.String()
}

// jsonString returns a JSON string's value, a number's text, or "".
func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// jsonStrings returns the items of a JSON array of strings or numbers, a
// single string as one item, or nil when absent or of another shape.
func jsonStrings(raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		if s := strings.TrimSpace(jsonString(raw)); s != "" {
			return []string{s}
		}
		return nil
	}
	out := []string{}
	for _, it := range items {
		if s := strings.TrimSpace(jsonString(it)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// jsonInt reads a priority: a number or a numeric string. Positive values
// are rounded and values beyond ±1e6 (even ±Inf, e.g. 1e400) are clamped
// there; a negative value other than exactly -1 reads as -2, so that no
// fraction rounds into the instruction's "absolute rule" -1. ok is false
// for anything else (a missing priority).
func jsonInt(raw json.RawMessage) (int, bool) {
	s := strings.TrimSpace(jsonString(raw))
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(f) {
		return 0, false
	}
	switch {
	case f == -1:
		return -1, true
	case f < 0:
		return -2, true
	case f > 1e6:
		return 1e6, true
	}
	return int(math.Round(f)), true
}

// maxSceneNameRunes bounds a scene name: it is persisted per session and
// sent again in every later prompt of the session.
const maxSceneNameRunes = 200

// sceneName is a model's scene name as kept: clean, one line, bounded.
func sceneName(s string) string {
	return clampRunes(imprint.OneLine(imprint.CleanText(s)), maxSceneNameRunes)
}
