package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/wire"
)

// Category is a LoCoMo question category, as numbered in the data.
type Category int

// The LoCoMo categories. Adversarial questions (5) have no answer in the
// conversation and are not evaluated.
const (
	MultiHop    Category = 1
	Temporal    Category = 2
	OpenDomain  Category = 3
	SingleHop   Category = 4
	Adversarial Category = 5
)

// Categories are the evaluated categories, in report order.
var Categories = []Category{MultiHop, Temporal, OpenDomain, SingleHop}

// String returns the category's name ("multi-hop", …), or "category N".
func (c Category) String() string {
	switch c {
	case MultiHop:
		return "multi-hop"
	case Temporal:
		return "temporal"
	case OpenDomain:
		return "open-domain"
	case SingleHop:
		return "single-hop"
	case Adversarial:
		return "adversarial"
	}
	return fmt.Sprintf("category %d", int(c))
}

// Question is one item of a sample's qa list.
type Question struct {
	// SampleID is the sample's id, which is also the session id of its
	// imported conversation.
	SampleID string `json:"sample_id"`
	// Index is the item's position in the sample's qa list.
	Index    int      `json:"index"`
	Text     string   `json:"question"`
	Answer   string   `json:"answer"`
	Category Category `json:"category"`
	// Evidence are the dia ids of the turns that hold the answer, as
	// given, except that an entry naming several ("D8:6; D9:17") is
	// split.
	Evidence []string `json:"evidence"`
}

// Dataset is a LoCoMo file read for evaluation: the conversations, as
// imprint import reads them, and the questions.
type Dataset struct {
	File        string
	Transcripts []importer.Transcript
	Questions   []Question
	// SplitEvidence counts evidence entries that named several dia ids
	// and were split.
	SplitEvidence int
	// Malformed counts qa items that could not be read, and those of a
	// sample whose sample_id an earlier sample has (skipped).
	Malformed int
}

// locomoQA is the part of a LoCoMo sample that the importer does not read.
type locomoQA struct {
	SampleID string            `json:"sample_id"`
	QA       []json.RawMessage `json:"qa"`
}

// locomoQuestion is one qa item. The answer is a string, a number or
// absent (adversarial items carry adversarial_answer instead).
type locomoQuestion struct {
	Question string          `json:"question"`
	Answer   json.RawMessage `json:"answer"`
	Evidence []string        `json:"evidence"`
	Category Category        `json:"category"`
}

// ReadLoCoMoFile reads the LoCoMo file at path (see ReadLoCoMo). A missing
// or unreadable file is ErrInvalid.
func ReadLoCoMoFile(path string) (Dataset, error) {
	f, err := wire.OpenFile(path, "give a LoCoMo JSON file")
	if err != nil {
		return Dataset{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return Dataset{}, wire.FileError(path, err)
	}
	return readLoCoMo(data, path)
}

// ReadLoCoMo reads a LoCoMo file (a JSON array of samples, or one sample):
// the conversations with importer.ReadLoCoMo (dates in UTC, as imprint
// import reads them by default), and every sample's qa list. The questions
// of a sample whose sample_id an earlier sample has are skipped (counted in
// Malformed), as the importer skips its conversation. It returns
// ErrInvalid when the input is not LoCoMo: not JSON, no conversation
// imports, or no question.
func ReadLoCoMo(r io.Reader, file string) (Dataset, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Dataset{}, fmt.Errorf("read %s: %w", file, err)
	}
	return readLoCoMo(data, file)
}

func readLoCoMo(data []byte, file string) (Dataset, error) {
	trs, err := importer.ReadLoCoMo(bytes.NewReader(data), file, time.UTC)
	if err != nil {
		return Dataset{}, err
	}
	ds := Dataset{File: file}
	for _, tr := range trs {
		if tr.SessionID != "" && len(tr.Messages) > 0 {
			ds.Transcripts = append(ds.Transcripts, tr)
		}
	}
	if len(ds.Transcripts) == 0 {
		return Dataset{}, imprint.Invalidf("%s: no LoCoMo conversation with messages", file)
	}
	samples, err := importer.LoCoMoSamples(data)
	if err != nil {
		return Dataset{}, imprint.Invalidf("%s: not a LoCoMo file: %v", file, err)
	}
	seen := map[string]bool{}
	for i, raw := range samples {
		// A malformed sample keeps its place (for the positional id) and
		// contributes no questions; the importer reports it.
		var s locomoQA
		_ = json.Unmarshal(raw, &s)
		sid := importer.LoCoMoSampleID(s.SampleID, i)
		if seen[sid] {
			// The importer kept the conversation of the first sample with
			// this id: these dia ids would resolve to its turns.
			ds.Malformed += len(s.QA)
			continue
		}
		seen[sid] = true
		for j, raw := range s.QA {
			var q locomoQuestion
			if err := json.Unmarshal(raw, &q); err != nil || strings.TrimSpace(q.Question) == "" {
				ds.Malformed++
				continue
			}
			ev, split := splitEvidence(q.Evidence)
			ds.SplitEvidence += split
			ds.Questions = append(ds.Questions, Question{
				SampleID: sid, Index: j, Text: strings.TrimSpace(q.Question),
				Answer: answerText(q.Answer), Category: q.Category, Evidence: ev,
			})
		}
	}
	if len(ds.Questions) == 0 {
		return Dataset{}, imprint.Invalidf("%s: no qa items: not a LoCoMo file with questions", file)
	}
	return ds, nil
}

// splitEvidence trims the evidence entries and splits those naming several
// dia ids (separated by ';' or ','); split counts the entries split.
func splitEvidence(in []string) (out []string, split int) {
	for _, e := range in {
		parts := strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' })
		n := 0
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
				n++
			}
		}
		if n > 1 {
			split++
		}
	}
	return out, split
}

// answerText returns a qa answer as text: a string as is, anything else
// (a year as a number) as its JSON.
func answerText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// MessageReader reads stored messages (imprint.MessageStore has it).
type MessageReader interface {
	GetMessage(ctx context.Context, scope imprint.Scope, sessionID, id string) (imprint.Message, error)
}

// Resolution is the questions to evaluate, each with the message ids of
// its evidence turns, and what was left out.
type Resolution struct {
	Questions []Resolved
	// Adversarial counts category-5 questions, NoEvidence questions with
	// an empty evidence list, Unresolved questions none of whose evidence
	// ids is a stored message, OtherCategory questions of a category
	// outside 1–5: none of them is evaluated.
	Adversarial, NoEvidence, Unresolved, OtherCategory int
	// UnresolvedIDs lists every evidence id of a question of categories
	// 1–4 that is not a stored message, as "<sample_id> <dia_id>".
	UnresolvedIDs []string
}

// Resolved is a question with the stored message ids of its evidence.
type Resolved struct {
	Question
	MessageIDs []string `json:"message_ids"`
}

// Resolve maps the evidence of every question of categories 1–4 to stored
// messages. The LoCoMo importer gives the turn with dia id D of sample S
// the message id "S:D" (and "S:D#2", … to later turns repeating D), so an
// evidence id resolves to those of its ids that st holds in the session S
// of scope. A question keeps the evidence ids that resolve; one left with
// none is not evaluated (counted in Unresolved).
func Resolve(ctx context.Context, ds Dataset, st MessageReader, scope imprint.Scope) (Resolution, error) {
	// dia id → message ids, per sample, from the conversations as read.
	ids := map[string]map[string][]string{}
	for _, tr := range ds.Transcripts {
		bySample := map[string][]string{}
		for _, m := range tr.Messages {
			dia, _, _ := strings.Cut(strings.TrimPrefix(m.ID, tr.SessionID+":"), "#")
			bySample[dia] = append(bySample[dia], m.ID)
		}
		ids[tr.SessionID] = bySample
	}
	var res Resolution
	for _, q := range ds.Questions {
		switch {
		case q.Category == Adversarial:
			res.Adversarial++
			continue
		case q.Category < MultiHop || q.Category > Adversarial:
			res.OtherCategory++
			continue
		case len(q.Evidence) == 0:
			res.NoEvidence++
			continue
		}
		r := Resolved{Question: q}
		for _, dia := range q.Evidence {
			found := false
			for _, id := range ids[q.SampleID][dia] {
				_, err := st.GetMessage(ctx, scope, q.SampleID, id)
				if errors.Is(err, imprint.ErrNotFound) {
					continue
				}
				if err != nil {
					return Resolution{}, fmt.Errorf("resolve evidence %s %s: %w", q.SampleID, dia, err)
				}
				r.MessageIDs = append(r.MessageIDs, id)
				found = true
			}
			if !found {
				res.UnresolvedIDs = append(res.UnresolvedIDs, q.SampleID+" "+dia)
			}
		}
		if len(r.MessageIDs) == 0 {
			res.Unresolved++
			continue
		}
		res.Questions = append(res.Questions, r)
	}
	return res, nil
}
