package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
)

// Ks are the cut-offs of recall@k.
var Ks = []int{1, 5, 10}

// Report is the result of a run.
type Report struct {
	File          string   `json:"file"`
	Conversations int      `json:"conversations"`
	Turns         int      `json:"turns"`
	Imported      Imported `json:"imported"`
	Limit         int      `json:"limit"`
	BudgetTokens  int      `json:"budget_tokens"`
	// Evaluated is the number of questions asked of every method.
	Evaluated int     `json:"questions"`
	Skipped   Skipped `json:"skipped"`
	// SplitEvidence counts evidence entries that named several dia ids.
	SplitEvidence int `json:"split_evidence_entries"`
	// UnresolvedIDs are the evidence ids (of categories 1–4) that name no
	// stored message, as "<sample_id> <dia_id>".
	UnresolvedIDs []string       `json:"unresolved_evidence_ids"`
	Methods       []MethodResult `json:"methods"`
	// QuerySeconds is the wall time of all queries of all methods.
	QuerySeconds float64          `json:"query_seconds"`
	Questions    []QuestionResult `json:"per_question"`
}

// Skipped counts the questions not evaluated, by reason.
type Skipped struct {
	Adversarial   int `json:"adversarial"`
	NoEvidence    int `json:"no_evidence"`
	Unresolved    int `json:"unresolved_evidence"`
	OtherCategory int `json:"other_category"`
	Malformed     int `json:"malformed"`
}

// MethodResult is one method's recall and latency.
type MethodResult struct {
	Name       string           `json:"name"`
	Doc        string           `json:"doc"`
	Overall    Recall           `json:"overall"`
	ByCategory []CategoryRecall `json:"by_category"`
	P50MS      float64          `json:"p50_ms"`
	P95MS      float64          `json:"p95_ms"`
}

// CategoryRecall is a method's recall on the questions of one category.
type CategoryRecall struct {
	Category Category `json:"category"`
	Name     string   `json:"name"`
	Recall
}

// Recall is the fraction of questions with at least one evidence turn
// among a method's first k hits.
type Recall struct {
	Questions int     `json:"n"`
	At1       float64 `json:"recall_at_1"`
	At5       float64 `json:"recall_at_5"`
	At10      float64 `json:"recall_at_10"`
	// Any counts every hit the method returned: for a search the same as
	// At10 at limit 10, for the recall block evidence anywhere in it.
	Any float64 `json:"recall_any"`
}

// At returns recall@k for k in Ks, and Any for k 0.
func (r Recall) At(k int) float64 {
	switch k {
	case 1:
		return r.At1
	case 5:
		return r.At5
	case 10:
		return r.At10
	}
	return r.Any
}

// QuestionResult is one evaluated question and, per method, the rank
// (1-based) of its first hit that is or derives from an evidence turn; 0
// when none does.
type QuestionResult struct {
	Resolved
	Ranks map[string]int `json:"ranks"`
}

// methodResult computes a method's recall from the questions' ranks, and
// its latency percentiles.
func methodResult(m Method, qs []QuestionResult, lat []time.Duration) MethodResult {
	mr := MethodResult{Name: m.Name, Doc: m.Doc, P50MS: percentileMS(lat, 0.50), P95MS: percentileMS(lat, 0.95)}
	ranks := func(c Category) []int {
		var out []int
		for _, q := range qs {
			if c == 0 || q.Category == c {
				out = append(out, q.Ranks[m.Name])
			}
		}
		return out
	}
	mr.Overall = recallOf(ranks(0))
	for _, c := range Categories {
		mr.ByCategory = append(mr.ByCategory, CategoryRecall{Category: c, Name: c.String(), Recall: recallOf(ranks(c))})
	}
	return mr
}

// recallOf is recall@k over questions with the given first-evidence ranks.
func recallOf(ranks []int) Recall {
	r := Recall{Questions: len(ranks)}
	if len(ranks) == 0 {
		return r
	}
	frac := func(k int) float64 {
		n := 0
		for _, rk := range ranks {
			if rk > 0 && (k == 0 || rk <= k) {
				n++
			}
		}
		return float64(n) / float64(len(ranks))
	}
	r.At1, r.At5, r.At10, r.Any = frac(1), frac(5), frac(10), frac(0)
	return r
}

// percentileMS is the nearest-rank p-th percentile of ds, in milliseconds.
func percentileMS(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	// The epsilon keeps 0.95×20 = 19.000…04 at rank 19.
	i := int(math.Ceil(float64(len(s))*p-1e-9)) - 1
	i = min(max(i, 0), len(s)-1)
	return float64(s[i].Microseconds()) / 1000
}

// origins finds the turns a hit is or derives from: a message hit is its
// own turn; a memory hit derives from its source messages; a trace hit
// from the turns of its step: the trace's episode is read from the store
// and split into steps by capture.ExtractSteps, the step whose key is the
// trace's holding the turns. Trace lookups are cached.
type origins struct {
	st     Store
	scope  imprint.Scope
	traces map[string][]string            // trace id → turn ids
	steps  map[string]map[string][]string // episode id → step key → turn ids
}

func newOrigins(st Store, scope imprint.Scope) *origins {
	return &origins{st: st, scope: scope, traces: map[string][]string{}, steps: map[string]map[string][]string{}}
}

// rank returns the 1-based position of the first hit that is or derives
// from one of the evidence message ids, 0 when none does.
func (o *origins) rank(ctx context.Context, hits []imprint.Hit, evidence []string) (int, error) {
	for i, h := range hits {
		turns, err := o.turns(ctx, h)
		if err != nil {
			return 0, err
		}
		for _, t := range turns {
			if slices.Contains(evidence, t) {
				return i + 1, nil
			}
		}
	}
	return 0, nil
}

// turns returns the message ids h is or derives from.
func (o *origins) turns(ctx context.Context, h imprint.Hit) ([]string, error) {
	switch h.Kind {
	case imprint.KindMessage:
		return []string{h.ID}, nil
	case imprint.KindMemory:
		return h.SourceMessageIDs, nil
	case imprint.KindTrace:
		return o.traceTurns(ctx, h.ID)
	}
	return nil, nil
}

func (o *origins) traceTurns(ctx context.Context, id string) ([]string, error) {
	if ts, ok := o.traces[id]; ok {
		return ts, nil
	}
	t, err := o.st.GetTrace(ctx, o.scope, id)
	if errors.Is(err, imprint.ErrNotFound) {
		o.traces[id] = nil
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", id, err)
	}
	steps, ok := o.steps[t.EpisodeID]
	if !ok {
		ep, err := o.st.GetEpisode(ctx, o.scope, t.EpisodeID)
		if err != nil && !errors.Is(err, imprint.ErrNotFound) {
			return nil, fmt.Errorf("trace %s: episode %s: %w", id, t.EpisodeID, err)
		}
		steps = stepTurns(ep)
		o.steps[t.EpisodeID] = steps
	}
	o.traces[id] = steps[t.StepKey]
	return o.traces[id], nil
}

// stepTurns maps each step key of ep to the ids of the step's user and
// assistant turns. It runs capture's own step split on a copy of the
// episode whose turns carry their ids as content, so the step texts are
// made of turn ids (lines that are not, such as tool observations, are
// dropped).
func stepTurns(ep imprint.Episode) map[string][]string {
	turns := make([]imprint.Turn, len(ep.Turns))
	ids := map[string]bool{}
	for i, t := range ep.Turns {
		turns[i] = imprint.Turn{ID: t.ID, Role: t.Role, Content: t.ID, TS: t.TS}
		ids[t.ID] = t.ID != ""
	}
	ep.Turns = turns
	out := map[string][]string{}
	for _, st := range capture.ExtractSteps(ep) {
		var in []string
		for _, line := range strings.Split(st.UserText+"\n"+st.AgentText, "\n") {
			if line = strings.TrimSpace(line); ids[line] {
				in = append(in, line)
			}
		}
		out[st.Key] = in
	}
	return out
}
