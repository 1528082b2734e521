package eval

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/internal/testfiles"
	"github.com/imprint-dev/imprint/record"
	"github.com/imprint-dev/imprint/sqlite"
)

const tinyFile = "testdata/locomo-tiny.json"

// importFile reads a LoCoMo file and stores its conversations the way
// imprint import does minus extraction: messages recorded, each session
// captured as an episode (id derived from the scope) into traces. The
// store is a file in a temporary folder.
func importFile(t *testing.T, path string, withTraces bool) (Dataset, *sqlite.DB, imprint.Scope) {
	t.Helper()
	ctx := t.Context()
	ds, err := ReadLoCoMoFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "imprint.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	scope := imprint.DefaultScope()
	var sessions []record.Session
	var eps []imprint.Episode
	for _, tr := range ds.Transcripts {
		sessions = append(sessions, record.Session{SessionID: tr.SessionID, Messages: tr.Messages})
		for _, ep := range tr.Episodes {
			ep.Scope = scope
			ep.ID = capture.DeriveEpisodeID(ep)
			eps = append(eps, ep)
		}
	}
	if _, err := record.NewRecorder(record.Deps{Store: db}, record.Config{}).RecordMany(ctx, scope, sessions); err != nil {
		t.Fatal(err)
	}
	if withTraces {
		if _, err := capture.NewRunner(capture.Deps{Store: db}, capture.DefaultConfig()).RunMany(ctx, eps, ""); err != nil {
			t.Fatal(err)
		}
	}
	return ds, db, scope
}

// traceOf returns the id of the trace of step key of the tiny file's
// session n (1-based), as capture stores it.
func traceOf(t *testing.T, ds Dataset, scope imprint.Scope, session int, key string) string {
	t.Helper()
	ep := ds.Transcripts[0].Episodes[session-1]
	ep.Scope = scope
	return capture.TraceID(capture.DeriveEpisodeID(ep), key)
}

func msgHit(id string) imprint.Hit { return imprint.Hit{Kind: imprint.KindMessage, ID: "tiny-1:" + id} }

func TestEvalReadLoCoMo(t *testing.T) {
	t.Parallel()
	ds, err := ReadLoCoMoFile(tinyFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Transcripts) != 1 || len(ds.Transcripts[0].Messages) != 8 {
		t.Fatalf("transcripts: got %d, want 1 of 8 messages", len(ds.Transcripts))
	}
	if ds.Malformed != 1 || ds.SplitEvidence != 1 {
		t.Errorf("malformed %d, split %d: want 1 and 1", ds.Malformed, ds.SplitEvidence)
	}
	type q struct {
		Text     string
		Answer   string
		Category Category
		Evidence []string
	}
	var got []q
	for _, x := range ds.Questions {
		if x.SampleID != "tiny-1" {
			t.Errorf("question %d: sample %q", x.Index, x.SampleID)
		}
		got = append(got, q{x.Text, x.Answer, x.Category, x.Evidence})
	}
	want := []q{
		{"Which pottery classes did Ana start?", "pottery classes", SingleHop, []string{"D2:3"}},
		{"What is the name of the puppy?", "Biscuit", SingleHop, []string{"D1:3"}},
		{"What is Ana's pet called?", "Biscuit", Temporal, []string{"D1:3"}},
		{"Is camping by the lake Ben's favourite weekend plan?", "Yes", OpenDomain, []string{"D2:2", "D1:4"}},
		{"What did Ben's brother paint?", "", Adversarial, []string{"D1:4"}},
		{"Would Ana call herself a dog person?", "Likely yes", SingleHop, nil},
		{"Where does Ana live?", "Lisbon", Temporal, []string{"D9:9"}},
		{"When did Ana adopt the retriever?", "2023", MultiHop, []string{"D1:1", "D7:1"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
}

func TestEvalReadLoCoMoInvalid(t *testing.T) {
	t.Parallel()
	conv := `"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:00 pm on 8 May, 2023",
		"session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hello there"}]}`
	for name, in := range map[string]string{
		"not json":        "this is not json",
		"no conversation": `[{"sample_id": "x", "qa": [{"question": "q?", "evidence": ["D1:1"], "category": 4}]}]`,
		"no qa":           `[{"sample_id": "x", ` + conv + `}]`,
		"a number":        `42`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadLoCoMo(strings.NewReader(in), name+".json")
			if !errors.Is(err, imprint.ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
		})
	}
	t.Run("one sample object", func(t *testing.T) {
		t.Parallel()
		ds, err := ReadLoCoMo(strings.NewReader(`{"sample_id": "x", `+conv+`, "qa": [{"question": "hello?", "evidence": ["D1:1"], "category": 4}]}`), "one.json")
		if err != nil || len(ds.Questions) != 1 || ds.Questions[0].SampleID != "x" {
			t.Fatalf("got %+v, %v", ds.Questions, err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		if _, err := ReadLoCoMoFile(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, imprint.ErrInvalid) {
			t.Fatalf("got %v, want ErrInvalid", err)
		}
	})
}

// The importer keeps the conversation of the first of two samples with one
// sample_id; the second's questions are skipped, not resolved against the
// first's turns.
func TestEvalReadLoCoMoDuplicateSampleID(t *testing.T) {
	t.Parallel()
	sample := func(text, question string) string {
		return `{"sample_id": "dup", "conversation": {"speaker_a": "A", "speaker_b": "B",
			"session_1_date_time": "1:00 pm on 8 May, 2023",
			"session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "` + text + `"}]},
			"qa": [{"question": "` + question + `", "answer": "x", "evidence": ["D1:1"], "category": 4},
				{"question": "` + question + ` again?", "answer": "x", "evidence": ["D1:1"], "category": 4}]}`
	}
	in := "[" + sample("I live in Lisbon.", "Where does A live?") + "," + sample("I adopted a puppy.", "What did A adopt?") + "]"
	ds, err := ReadLoCoMo(strings.NewReader(in), "dup.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Transcripts) != 1 || ds.Transcripts[0].Messages[0].Content != "I live in Lisbon." {
		t.Fatalf("transcripts: %+v, want the first sample's", ds.Transcripts)
	}
	var got []string
	for _, q := range ds.Questions {
		got = append(got, q.SampleID+" "+q.Text)
	}
	if diff := cmp.Diff([]string{"dup Where does A live?", "dup Where does A live? again?"}, got); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
	if ds.Malformed != 2 {
		t.Errorf("malformed %d, want the second sample's 2 questions", ds.Malformed)
	}
}

func TestEvalBM25Query(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"What is Caroline's favourite book?":  `"caroline" OR "favourite" OR "book"`,
		"Who is it?":                          "",
		"Did Jon go to Paris, then to Paris?": `"jon" OR "go" OR "paris"`,
		"When did Melanie paint a sunrise?":   `"melanie" OR "paint" OR "sunrise"`,
		`"quoted" OR (NEAR) *`:                `"quoted" OR "near"`,
		"Où est Zoë en 2023 ?":                `"où" OR "est" OR "zoë" OR "en" OR "2023"`,
	} {
		if got := BM25Query(in); got != want {
			t.Errorf("BM25Query(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEvalRunTiny runs the harness on a hand-made file whose answers are
// known: the BM25 baseline's ranks follow from the turns' words, and a
// scripted method returns message, memory and trace hits at chosen ranks,
// so every recall@k is known exactly.
func TestEvalRunTiny(t *testing.T) {
	t.Parallel()
	ds, db, scope := importFile(t, tinyFile, true)
	script := map[string][]imprint.Hit{
		// rank 1: the evidence message itself.
		"Which pottery classes did Ana start?": {msgHit("D2:3"), msgHit("D2:4")},
		// rank 3: a memory made from the evidence turn.
		"What is the name of the puppy?": {msgHit("D1:1"), msgHit("D1:2"),
			{Kind: imprint.KindMemory, ID: "m1", SourceMessageIDs: []string{"tiny-1:D2:1", "tiny-1:D1:3"}}},
		// rank 7: the trace of the step holding D1:3 (session 1, turns 3-4).
		"What is Ana's pet called?": {msgHit("D2:1"), msgHit("D2:2"), msgHit("D2:3"), msgHit("D2:4"), msgHit("D1:1"), msgHit("D1:2"),
			{Kind: imprint.KindTrace, ID: traceOf(t, ds, scope, 1, "1")}},
		// none: the trace of session 1's first step holds D1:1 and D1:2 only.
		"Is camping by the lake Ben's favourite weekend plan?": {{Kind: imprint.KindTrace, ID: traceOf(t, ds, scope, 1, "0")}},
		// rank 2.
		"When did Ana adopt the retriever?": {msgHit("D1:2"), msgHit("D1:1")},
	}
	scripted := Method{Name: "scripted", Retrieve: func(_ context.Context, q string) ([]imprint.Hit, error) {
		hits, ok := script[q]
		if !ok {
			t.Errorf("unexpected question %q", q)
		}
		return hits, nil
	}}
	rep, err := Run(t.Context(), ds, System{Scope: scope, Store: db}, []Method{scripted}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Evaluated != 5 || rep.Turns != 8 || rep.Conversations != 1 {
		t.Errorf("evaluated %d questions over %d turns of %d conversations, want 5, 8, 1", rep.Evaluated, rep.Turns, rep.Conversations)
	}
	if diff := cmp.Diff(Skipped{Adversarial: 1, NoEvidence: 1, Unresolved: 1, Malformed: 1}, rep.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tiny-1 D9:9", "tiny-1 D7:1"}, rep.UnresolvedIDs); diff != "" {
		t.Errorf("unresolved ids (-want +got):\n%s", diff)
	}

	ranks := map[string][]int{}
	for _, q := range rep.Questions {
		for m, r := range q.Ranks {
			ranks[m] = append(ranks[m], r)
		}
	}
	// bm25: the pottery and lake questions find their turn first; "name"
	// and "puppy" both match the question turn D1:2, which ranks first,
	// then D1:1 and the answer D1:3 with one word each (D1:1 first by
	// rowid); Ana's pet is never named in the turns (speakers are not
	// indexed); the retriever is only in D1:1.
	wantRanks := map[string][]int{MethodBM25: {1, 3, 0, 1, 1}, "scripted": {1, 3, 7, 0, 2}}
	if diff := cmp.Diff(wantRanks, ranks); diff != "" {
		t.Errorf("ranks (-want +got):\n%s", diff)
	}

	type row struct {
		Name                                      string
		Overall                                   Recall
		MultiHop, Temporal, OpenDomain, SingleHop Recall
	}
	var got []row
	for _, m := range rep.Methods {
		got = append(got, row{m.Name, m.Overall, m.ByCategory[0].Recall, m.ByCategory[1].Recall, m.ByCategory[2].Recall, m.ByCategory[3].Recall})
	}
	want := []row{
		{MethodBM25, Recall{5, 0.6, 0.8, 0.8, 0.8},
			Recall{1, 1, 1, 1, 1}, Recall{1, 0, 0, 0, 0}, Recall{1, 1, 1, 1, 1}, Recall{2, 0.5, 1, 1, 1}},
		{"scripted", Recall{5, 0.2, 0.6, 0.8, 0.8},
			Recall{1, 0, 1, 1, 1}, Recall{1, 0, 0, 1, 1}, Recall{1, 0, 0, 0, 0}, Recall{2, 0.5, 1, 1, 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recall (-want +got):\n%s", diff)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"bm25              @1           1.000       0.000       1.000       0.500    0.600",
		"scripted          @1           0.000       0.000       0.000       0.500    0.200   -0.400",
		"evidence: 1 entries naming several turns (split), 2 ids resolving to no stored turn: tiny-1 D9:9, tiny-1 D7:1",
	} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("report has no line %q:\n%s", line, text.String())
		}
	}
}

// TestEvalTestdataEvidenceResolves checks that the evidence of every
// question of categories 1–4 of the repository's LoCoMo conversations
// names turns that imprint import stores, so no question is lost to the
// id mapping. Its counts are what the benchmark evaluates.
func TestEvalTestdataEvidenceResolves(t *testing.T) {
	t.Parallel()
	ds, db, scope := importFile(t, testfiles.Path(t, "locomo/locomo-2conv.json"), false)
	res, err := Resolve(t.Context(), ds, db, scope)
	if err != nil {
		t.Fatal(err)
	}
	got := Resolution{Adversarial: res.Adversarial, NoEvidence: res.NoEvidence, Unresolved: res.Unresolved,
		OtherCategory: res.OtherCategory, UnresolvedIDs: res.UnresolvedIDs}
	if diff := cmp.Diff(Resolution{Adversarial: 71, NoEvidence: 2}, got); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(res.Questions) != 231 || ds.SplitEvidence != 1 || ds.Malformed != 0 {
		t.Errorf("%d questions, %d split evidence entries, %d malformed: want 231, 1 (conv-26 \"D8:6; D9:17\"), 0",
			len(res.Questions), ds.SplitEvidence, ds.Malformed)
	}
	for _, q := range res.Questions {
		for _, id := range q.MessageIDs {
			if _, err := db.GetMessage(t.Context(), scope, q.SampleID, id); err != nil {
				t.Errorf("%s question %d: evidence %s: %v", q.SampleID, q.Index, id, err)
			}
		}
	}
}

func TestEvalPercentile(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 20; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if p50, p95 := percentileMS(ds, 0.5), percentileMS(ds, 0.95); p50 != 10 || p95 != 19 {
		t.Errorf("p50 %v, p95 %v: want 10, 19", p50, p95)
	}
	if p := percentileMS(nil, 0.5); p != 0 {
		t.Errorf("empty: %v", p)
	}
}
