package eval

import (
	"context"
	"fmt"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/search"
)

// Store is what the harness reads from the imported store besides
// searching it: the messages (to resolve evidence), and the traces and
// their episodes (to find the turns a trace was made from).
type Store interface {
	MessageReader
	GetTrace(ctx context.Context, scope imprint.Scope, id string) (imprint.Trace, error)
	GetEpisode(ctx context.Context, scope imprint.Scope, id string) (imprint.Episode, error)
}

// System is a store the dataset was imported into, and imprint's
// retrieval over it.
type System struct {
	Scope    imprint.Scope
	Store    Store
	Searcher search.Searcher
	Recaller search.Recaller
	// Imported says what the import stored and how; it is copied into the
	// report.
	Imported Imported
}

// Imported describes the import a System was built by.
type Imported struct {
	Messages int `json:"messages"`
	Episodes int `json:"episodes"`
	Traces   int `json:"traces"`
	Memories int `json:"memories"`
	Warnings int `json:"warnings"`
	// Extractor is "heuristic" without an LLM, else the LLM provider.
	Extractor string `json:"extractor"`
	// Embedder names the embedder ("hash/384"), "" when none.
	Embedder string  `json:"embedder"`
	Seconds  float64 `json:"seconds"`
}

// Options are the query settings of a run; zero values take the issue's
// settings.
type Options struct {
	// Limit is the number of hits asked of each search (default 10).
	Limit int
	// BudgetTokens is the recall block's budget (default 1000).
	BudgetTokens int
}

// Defaults of Options.
const (
	DefaultLimit        = 10
	DefaultBudgetTokens = 1000
)

func (o Options) withDefaults() Options {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	if o.BudgetTokens <= 0 {
		o.BudgetTokens = DefaultBudgetTokens
	}
	return o
}

// Method is one way to retrieve for a question: Retrieve returns its hits,
// best first.
type Method struct {
	Name string
	// Doc says in a few words what the method is, for the report.
	Doc      string
	Retrieve func(ctx context.Context, question string) ([]imprint.Hit, error)
}

// Names of the methods of Methods and of the baseline.
const (
	MethodBM25            = "bm25"
	MethodMessage         = "message"
	MethodMessageKeywords = "message-keywords"
	MethodMemory          = "memory"
	MethodAll             = "all"
	MethodRecall          = "recall"
)

// Methods are imprint's retrieval methods over sys: search of messages
// (hybrid, then keywords only: the searcher without its embedder), of
// memories and of all kinds, opts.Limit hits each, and the recall block at
// opts.BudgetTokens, whose hits are the records shown in the block, in
// block order.
func Methods(sys System, opts Options) []Method {
	opts = opts.withDefaults()
	searchKinds := func(s search.Searcher, kinds ...imprint.Kind) func(context.Context, string) ([]imprint.Hit, error) {
		return func(ctx context.Context, q string) ([]imprint.Hit, error) {
			return s.Search(ctx, imprint.SearchQuery{Scope: sys.Scope, Text: q, Kinds: kinds, Limit: opts.Limit})
		}
	}
	keywords := search.Searcher{Store: sys.Searcher.Store}
	return []Method{
		{Name: MethodMessage, Doc: "imprint search --kind message", Retrieve: searchKinds(sys.Searcher, imprint.KindMessage)},
		{Name: MethodMessageKeywords, Doc: "the same, keywords only (no embedder)", Retrieve: searchKinds(keywords, imprint.KindMessage)},
		{Name: MethodMemory, Doc: "imprint search --kind memory", Retrieve: searchKinds(sys.Searcher, imprint.KindMemory)},
		{Name: MethodAll, Doc: "imprint search --kind all", Retrieve: searchKinds(sys.Searcher)},
		{Name: MethodRecall, Doc: fmt.Sprintf("imprint recall --budget-tokens %d (records in the block)", opts.BudgetTokens),
			Retrieve: func(ctx context.Context, q string) ([]imprint.Hit, error) {
				res, err := sys.Recaller.Recall(ctx, imprint.RecallQuery{Scope: sys.Scope, Text: q, BudgetTokens: opts.BudgetTokens})
				return res.Hits, err
			}},
	}
}

// Run evaluates the methods, and before them the BM25 baseline over the
// dataset's turns, on every question of categories 1–4 whose evidence
// resolves to messages of sys.Store (see Resolve), one query at a time,
// timing each. Errors of a method are returned wrapped with its name and
// the question.
func Run(ctx context.Context, ds Dataset, sys System, methods []Method, opts Options) (Report, error) {
	opts = opts.withDefaults()
	res, err := Resolve(ctx, ds, sys.Store, sys.Scope)
	if err != nil {
		return Report{}, err
	}
	var msgs []imprint.Message
	for _, tr := range ds.Transcripts {
		msgs = append(msgs, tr.Messages...)
	}
	bm, err := NewBM25(ctx, msgs)
	if err != nil {
		return Report{}, err
	}
	defer bm.Close()
	baseline := Method{Name: MethodBM25, Doc: "plain BM25 over the raw turns (FTS5 porter, stop words removed, OR)",
		Retrieve: func(ctx context.Context, q string) ([]imprint.Hit, error) { return bm.Search(ctx, q, opts.Limit) }}
	methods = append([]Method{baseline}, methods...)

	rep := Report{
		File: ds.File, Conversations: len(ds.Transcripts), Turns: len(msgs), Imported: sys.Imported,
		Limit: opts.Limit, BudgetTokens: opts.BudgetTokens,
		Evaluated: len(res.Questions), SplitEvidence: ds.SplitEvidence, UnresolvedIDs: res.UnresolvedIDs,
		Skipped: Skipped{Adversarial: res.Adversarial, NoEvidence: res.NoEvidence, Unresolved: res.Unresolved,
			OtherCategory: res.OtherCategory, Malformed: ds.Malformed},
	}
	if rep.UnresolvedIDs == nil {
		rep.UnresolvedIDs = []string{}
	}
	rep.Questions = make([]QuestionResult, len(res.Questions))
	for i, q := range res.Questions {
		rep.Questions[i] = QuestionResult{Resolved: q, Ranks: map[string]int{}}
	}
	origins := newOrigins(sys.Store, sys.Scope)
	start := time.Now()
	for _, m := range methods {
		lat := make([]time.Duration, len(res.Questions))
		for i, q := range res.Questions {
			t := time.Now()
			hits, err := m.Retrieve(ctx, q.Text)
			lat[i] = time.Since(t)
			if err != nil {
				return Report{}, fmt.Errorf("eval %s: %s question %d: %w", m.Name, q.SampleID, q.Index, err)
			}
			rank, err := origins.rank(ctx, hits, q.MessageIDs)
			if err != nil {
				return Report{}, fmt.Errorf("eval %s: %s question %d: %w", m.Name, q.SampleID, q.Index, err)
			}
			rep.Questions[i].Ranks[m.Name] = rank
		}
		rep.Methods = append(rep.Methods, methodResult(m, rep.Questions, lat))
	}
	rep.QuerySeconds = time.Since(start).Seconds()
	return rep, nil
}
