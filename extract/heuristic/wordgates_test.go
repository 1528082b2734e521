package heuristic

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/internal/testfiles"
)

// precheckTexts returns every message of the shared LoCoMo, τ-bench and
// Claude Code test data plus hand-made sentences that sit on the edges of
// the pre-check (anchored starts, words glued to punctuation, letters that
// case-fold onto ASCII).
func precheckTexts(tb testing.TB) []string {
	tb.Helper()
	var texts []string
	locomo := filepath.Join(testfiles.Dir(), "locomo", "locomo-2conv.json")
	lf, err := os.Open(locomo)
	if err != nil {
		tb.Fatalf("LoCoMo testdata: %v", err)
	}
	defer lf.Close()
	conv, err := importer.ReadLoCoMo(lf, locomo, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, tr := range conv {
		for _, m := range tr.Messages {
			texts = append(texts, m.Content)
		}
	}
	path := filepath.Join(testfiles.Dir(), "tau-bench", "airline-40.json")
	f, err := os.Open(path)
	if err != nil {
		tb.Fatalf("τ-bench testdata: %v", err)
	}
	defer f.Close()
	trs, err := importer.ReadTauBench(f, path)
	if err != nil {
		tb.Fatal(err)
	}
	cc, _, err := importer.ReadClaudeCodeDir(filepath.Join(testfiles.Dir(), "claude-code"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, tr := range append(trs, cc...) {
		for _, m := range tr.Messages {
			texts = append(texts, m.Content)
		}
	}
	return append(texts,
		"Always answer in French, thanks.",
		"Please never use tabs in my code.",
		"Stop sending emails again",
		"Don't ever call after nine.",
		"From now on reply briefly, okay.",
		"Just got back from a long trip to Peru.",
		"Went hiking up the mountain on Sunday.",
		"Yoga is a big passion of mine these days.",
		"Running helps me clear my head.",
		"The weather has been lovely all week long.",
		"éI am a teacher at the local school.",
		"(I moved to Berlin last year.)",
		"ſtop using jargon in replies again",
		"\u212aeep in mind that the deadline is Friday.",
		"Call me Sam from now on please.",
		// One sentence for each gated pattern.
		"I'm allergic to peanuts and shellfish.",
		"My name is Jordan Lee.",
		"I really love hiking in the mountains.",
		"I can't live without coffee in the morning.",
		"I'm a huge fan of jazz music.",
		"My favorite band is Radiohead.",
		"I work as a nurse in Boston.",
		"I grew up in a small town.",
		"I'm married and live with two cats.",
		"My sister just moved to Ohio.",
		"I have two dogs at home.",
		"My birthday is in June.",
		"I'm an engineer at a startup.",
		"Painting is my passion these days.",
		"I'm studying biology at college.",
		"My goal is to run a marathon.",
		"My hometown has great pizza.",
		"Yoga helps me stay calm.",
		"I've been learning Spanish lately.",
		"I'm going to Paris next week.",
		"We adopted a puppy last month.",
		"Started a new job at the bank.",
		"I'm painting the kitchen blue.",
	)
}

// TestEnglishWordGatesChangeNothing runs every sentence of the shared test
// data through the English patterns with the word gates (enWords) and
// with every pattern run: the gates may only skip patterns that cannot
// match, so both give the same memory.
func TestEnglishWordGatesChangeNothing(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC)
	// A user of an assistant, and a person talking to another.
	speakers := []speaker{{name: defaultSubject, ts: ts}, {name: "Caroline", named: true, people: true, ts: ts}}
	checked, skipped, found := 0, 0, 0
	for i, text := range precheckTexts(t) {
		sp := speakers[i%len(speakers)]
		for _, s := range splitSentences(text) {
			if s.question || hasCJK(s.text) {
				continue
			}
			clean, ok := englishClean(s.text)
			if !ok {
				continue
			}
			checked++
			want, wantOK := englishPatterns(clean, sp, enWords{all: true})
			got, gotOK := englishSentence(s.text, sp)
			if !newEnWords(clean).mayMatch() {
				skipped++
			}
			if wantOK {
				found++
			}
			if gotOK != wantOK || !cmp.Equal(got, want) {
				t.Errorf("%q: with the gates %v %+v, without %v %+v", clean, gotOK, got, wantOK, want)
			}
		}
	}
	if checked < 1000 || skipped == 0 || found < 100 {
		t.Fatalf("checked %d sentences, %d skipped, %d memories: the test data did not exercise the gates", checked, skipped, found)
	}
	t.Logf("%d sentences reach the patterns, %d skip them all, %d give a memory", checked, skipped, found)
}

// BenchmarkHeuristicTestdata runs Heuristic over every user message of the
// shared test data, ten messages per call as extraction windows are.
func BenchmarkHeuristicTestdata(b *testing.B) {
	var msgs []imprint.Message
	at := imprint.At(time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC))
	for i, text := range precheckTexts(b) {
		msgs = append(msgs, imprint.Message{ID: imprint.NewID(), Role: imprint.RoleUser, Content: text, Timestamp: at, Seq: int64(i)})
	}
	b.ResetTimer()
	for b.Loop() {
		for lo := 0; lo < len(msgs); lo += 10 {
			Extract(msgs[lo:min(lo+10, len(msgs))])
		}
	}
	b.ReportMetric(float64(len(msgs)*b.N)/b.Elapsed().Seconds(), "messages/s")
}
