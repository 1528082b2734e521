package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// SourceLoCoMo is the Source of transcripts read by ReadLoCoMo.
const SourceLoCoMo = "locomo"

// locomoTurnGap is the time added per message inside a LoCoMo session, whose
// turns carry no time of their own; it keeps them in order.
const locomoTurnGap = time.Second

// locomoSample is one element of a LoCoMo file. Only the conversation is
// read; QA pairs, summaries and observations are evaluation data.
type locomoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
}

// locomoTurn is one dialogue turn. A turn sharing a photo carries the
// photo's caption.
type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

// locomoSession is one numbered session of a sample, before ordering.
type locomoSession struct {
	num   int
	key   string
	turns []locomoTurn
	start time.Time // zero when the date is missing or malformed
}

var locomoSessionKey = regexp.MustCompile(`^session_([0-9]+)$`)

// ReadLoCoMo reads a LoCoMo file (a JSON array of samples, or one sample
// object) and returns one Transcript per sample. The session id is the
// sample_id; speaker_a is the user and speaker_b the assistant, their names
// kept in Message.Speaker and Turn.Meta.Speaker, and the transcript is
// marked BetweenPeople: both are people. Message ids are
// "<sample_id>:<dia_id>". Each session's date ("1:56 pm on 8 May, 2023") is
// read in loc (UTC when nil) and its n-th message gets that time plus n
// seconds; sessions are ordered by date, so messages are oldest first. Each
// LoCoMo session becomes one finalized episode. A turn sharing a photo gets
// the photo's caption appended as "[shared photo: …]".
//
// Malformed samples, sessions, dates and turns are reported as warnings and
// the rest imports; a session without a usable date continues from the
// previous session's last message, and is skipped when it has none. Warnings
// about samples that import nothing go to the first transcript, or to a
// transcript with no session id and no messages when no sample imports.
// Only input that is not a JSON array or object is an error (kind ErrInvalid).
func ReadLoCoMo(r io.Reader, file string, loc *time.Location) ([]Transcript, error) {
	return readLoCoMo(r, file, loc, true)
}

// readLoCoMo is ReadLoCoMo; with whole unset, every sample is decoded alone
// (the path for files that do not decode in one pass), for tests to compare
// the two.
func readLoCoMo(r io.Reader, file string, loc *time.Location, whole bool) ([]Transcript, error) {
	if loc == nil {
		loc = time.UTC
	}
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if err := checkDocument(data, file); err != nil {
		return nil, err
	}
	// Most files decode in one pass; when one does not, each sample is
	// decoded alone, so that a bad one is a warning and the rest import.
	var decoded []locomoSample
	if whole {
		decoded, whole = decodeArray[locomoSample](data)
	}
	var raw []json.RawMessage
	if !whole {
		if raw, err = LoCoMoSamples(data); err != nil {
			return nil, imprint.Invalidf("%s: not a LoCoMo file: %v", file, err)
		}
	}
	var out []Transcript
	var orphans []Warning // about samples that import nothing
	seen := map[string]bool{}
	for i := range max(len(decoded), len(raw)) {
		var s locomoSample
		if whole {
			s = decoded[i]
		} else if err := json.Unmarshal(raw[i], &s); err != nil {
			orphans = append(orphans, Warning{File: file, Message: fmt.Sprintf("sample %d: %v", i+1, err)})
			continue
		}
		tr, ok := readLoCoMoSample(s, i, file, loc)
		if !ok {
			orphans = append(orphans, tr.Warnings...)
			continue
		}
		if seen[tr.SessionID] {
			orphans = append(orphans, Warning{File: file, Message: fmt.Sprintf("sample %d: duplicate sample_id %q skipped", i+1, tr.SessionID)})
			continue
		}
		seen[tr.SessionID] = true
		out = append(out, tr)
	}
	if len(orphans) > 0 {
		if len(out) == 0 {
			out = append(out, Transcript{Source: SourceLoCoMo})
		}
		out[0].Warnings = append(out[0].Warnings, orphans...)
	}
	return cleanTranscripts(out, file)
}

// LoCoMoSamples splits a LoCoMo file into its samples, undecoded: a JSON
// array of samples, or a single sample object. Anything else is an error
// from encoding/json.
func LoCoMoSamples(data []byte) ([]json.RawMessage, error) {
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		var one json.RawMessage
		if err := json.Unmarshal(data, &one); err != nil {
			return nil, err
		}
		return []json.RawMessage{one}, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// LoCoMoSampleID returns the session id ReadLoCoMo gives the sample at
// index (0-based) of a file whose sample_id is id: id without surrounding
// space, or "locomo-<index+1>" when that is empty.
func LoCoMoSampleID(id string, index int) string {
	if id = strings.TrimSpace(id); id != "" {
		return id
	}
	return fmt.Sprintf("locomo-%d", index+1)
}

// readLoCoMoSample converts one sample. ok is false when nothing of it can be
// imported; its warnings say why.
func readLoCoMoSample(s locomoSample, index int, file string, loc *time.Location) (tr Transcript, ok bool) {
	tr.Source = SourceLoCoMo
	// Two people talk in LoCoMo; speaker_b only takes the assistant's role.
	tr.BetweenPeople = true
	label := fmt.Sprintf("sample %d", index+1)
	warn := func(format string, args ...any) {
		tr.Warnings = append(tr.Warnings, Warning{File: file, Message: label + ": " + fmt.Sprintf(format, args...)})
	}
	tr.SessionID = LoCoMoSampleID(s.SampleID, index)
	if strings.TrimSpace(s.SampleID) == "" {
		warn("no sample_id; using %q", tr.SessionID)
	} else {
		label = fmt.Sprintf("sample %q", tr.SessionID)
	}
	if s.Conversation == nil {
		warn("no conversation")
		return tr, false
	}
	speakerA := locomoString(s.Conversation["speaker_a"])
	speakerB := locomoString(s.Conversation["speaker_b"])
	if speakerA == "" || speakerB == "" {
		warn("speaker_a and speaker_b are required")
		return tr, false
	}

	var keys []string
	for key := range s.Conversation {
		if locomoSessionKey.MatchString(key) {
			keys = append(keys, key)
		}
	}
	sort.Slice(keys, func(i, j int) bool { // numerically, for stable warnings
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) < len(keys[j])
		}
		return keys[i] < keys[j]
	})
	var sessions []locomoSession
	for _, key := range keys {
		rawTurns := s.Conversation[key]
		m := locomoSessionKey.FindStringSubmatch(key)
		num, err := strconv.Atoi(m[1])
		if err != nil {
			warn("%s: bad session number", key)
			continue
		}
		var turns []locomoTurn
		if err := json.Unmarshal(rawTurns, &turns); err != nil {
			warn("%s: not a list of turns: %v", key, err)
			continue
		}
		ses := locomoSession{num: num, key: key, turns: turns}
		dateKey := key + "_date_time"
		if ds, present := s.Conversation[dateKey]; !present {
			warn("%s: no %s", key, dateKey)
		} else if t, err := parseLoCoMoDate(locomoString(ds), loc); err != nil {
			warn("%s: %v", dateKey, err)
		} else {
			ses.start = t
		}
		sessions = append(sessions, ses)
	}
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].num < sessions[j].num })
	sessions = orderLoCoMoSessions(sessions)

	ids := map[string]int{}
	var prev time.Time // time of the previous message, for undated sessions
	for _, ses := range sessions {
		base := ses.start
		if base.IsZero() {
			if prev.IsZero() {
				warn("%s: skipped, it has no usable date and no earlier session to follow", ses.key)
				continue
			}
			base = prev.Add(locomoTurnGap)
		}
		ep := imprint.Episode{
			ID:        tr.SessionID + ":" + ses.key,
			SessionID: tr.SessionID,
			Status:    imprint.EpisodeFinalized,
			ClosedBy:  imprint.ClosedFinalized,
			Meta:      imprint.EpisodeMeta{Source: SourceLoCoMo},
		}
		n := 0
		for ti, t := range ses.turns {
			var role imprint.Role
			switch strings.TrimSpace(t.Speaker) {
			case speakerA:
				role = imprint.RoleUser
			case speakerB:
				role = imprint.RoleAssistant
			default:
				warn("%s turn %d: unknown speaker %q skipped", ses.key, ti+1, t.Speaker)
				continue
			}
			content := strings.TrimSpace(t.Text)
			if c := strings.TrimSpace(t.BlipCaption); c != "" {
				content = strings.TrimSpace(content + "\n[shared photo: " + c + "]")
			}
			if content == "" {
				warn("%s turn %d: empty text skipped", ses.key, ti+1)
				continue
			}
			dia := strings.TrimSpace(t.DiaID)
			if dia == "" {
				dia = fmt.Sprintf("S%d:%d", ses.num, ti+1)
			}
			id := tr.SessionID + ":" + dia
			if k := ids[id]; k > 0 {
				ids[id] = k + 1
				id = fmt.Sprintf("%s#%d", id, k+1)
			} else {
				ids[id] = 1
			}
			ts := imprint.At(base.Add(time.Duration(n) * locomoTurnGap))
			n++
			speaker := strings.TrimSpace(t.Speaker)
			tr.Messages = append(tr.Messages, imprint.Message{
				ID:        id,
				SessionID: tr.SessionID,
				Role:      role,
				Content:   content,
				Timestamp: ts,
				Speaker:   speaker,
			})
			ep.Turns = append(ep.Turns, imprint.Turn{
				ID:      id,
				Role:    role,
				Content: content,
				TS:      ts,
				Meta:    imprint.TurnMeta{Speaker: speaker},
			})
			prev = ts.Time
		}
		if len(ep.Turns) == 0 {
			continue
		}
		ep.StartedAt = ep.Turns[0].TS
		ep.EndedAt = ep.Turns[len(ep.Turns)-1].TS
		tr.Episodes = append(tr.Episodes, ep)
	}
	return tr, true
}

// orderLoCoMoSessions orders sessions by date, keeping an undated session
// right after the session numbered before it.
func orderLoCoMoSessions(sessions []locomoSession) []locomoSession {
	type group struct {
		start time.Time
		items []locomoSession
	}
	var groups []group
	for _, s := range sessions {
		if s.start.IsZero() && len(groups) > 0 {
			groups[len(groups)-1].items = append(groups[len(groups)-1].items, s)
			continue
		}
		groups = append(groups, group{start: s.start, items: []locomoSession{s}})
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].start.Before(groups[j].start) })
	out := make([]locomoSession, 0, len(sessions))
	for _, g := range groups {
		out = append(out, g.items...)
	}
	return out
}

// locomoString returns raw as a trimmed string, or "" when it is not one.
func locomoString(raw json.RawMessage) string {
	if s, ok := plainJSONString(raw); ok {
		return strings.TrimSpace(s)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

var locomoDate = regexp.MustCompile(`(?i)^\s*([0-9]{1,2}):([0-9]{2})\s*([ap])\.?\s*m\.?\s+on\s+([0-9]{1,2})\s+([a-z]+)\.?,?\s+([0-9]{4})\s*$`)

var locomoMonths = map[string]time.Month{
	"jan": time.January, "feb": time.February, "mar": time.March, "apr": time.April,
	"may": time.May, "jun": time.June, "jul": time.July, "aug": time.August,
	"sep": time.September, "sept": time.September, "oct": time.October, "nov": time.November, "dec": time.December,
}

// parseLoCoMoDate parses a LoCoMo session date such as "1:56 pm on 8 May,
// 2023" in loc (UTC when nil). RFC 3339 and zone-less date-times are read
// too, the latter in loc.
func parseLoCoMoDate(s string, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	m := locomoDate.FindStringSubmatch(s)
	if m == nil {
		for _, layout := range []string{time.RFC3339Nano} {
			if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
				return t, nil
			}
		}
		for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
			if t, err := time.ParseInLocation(layout, strings.TrimSpace(s), loc); err == nil {
				return t, nil
			}
		}
		return time.Time{}, imprint.Invalidf("date %q is not like \"1:56 pm on 8 May, 2023\"", s)
	}
	hour, _ := strconv.Atoi(m[1])
	minute, _ := strconv.Atoi(m[2])
	day, _ := strconv.Atoi(m[4])
	year, _ := strconv.Atoi(m[6])
	name := strings.ToLower(m[5])
	month, ok := locomoMonths[name]
	if !ok && len(name) >= 3 {
		if mm, ok2 := locomoMonths[name[:3]]; ok2 && strings.HasPrefix(strings.ToLower(mm.String()), name) {
			month, ok = mm, true
		}
	}
	if !ok || hour < 1 || hour > 12 || minute > 59 || day < 1 || day > 31 {
		return time.Time{}, imprint.Invalidf("date %q is not a valid date", s)
	}
	hour %= 12
	if strings.EqualFold(m[3], "p") {
		hour += 12
	}
	t := time.Date(year, month, day, hour, minute, 0, 0, loc)
	if t.Day() != day {
		return time.Time{}, imprint.Invalidf("date %q is not a valid date", s)
	}
	return t, nil
}
