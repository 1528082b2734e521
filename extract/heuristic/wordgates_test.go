package heuristic

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
			if w := newEnWords(clean); !w.mayMatch() {
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

// TestGateWordsAreInTheVocabulary: every word a gate asks about (has,
// hasAny, enTriggers) is numbered in enVocab; one that is not would
// leave its gate always open.
func TestGateWordsAreInTheVocabulary(t *testing.T) {
	t.Parallel()
	call := regexp.MustCompile(`\bw\.(?:has|hasAny)\(([^)]*)\)`)
	lit := regexp.MustCompile(`"([^"]*)"`)
	words := append([]string{}, enTriggers...)
	words = append(words, enFamilyNouns...)
	words = append(words, enHelpsMeVerbs...)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			for _, l := range lit.FindAllStringSubmatch(m[1], -1) {
				words = append(words, l[1])
			}
		}
	}
	if len(words) < 150 {
		t.Fatalf("found %d gate words: the source scan is broken", len(words))
	}
	for _, w := range words {
		if _, ok := enVocab[w]; !ok {
			t.Errorf("gate word %q is not in enVocab", w)
		}
	}
}

// TestClausePatternsFindEveryMatch: a clause pattern tried at its first
// words gives every match, with its groups, that the pattern run over the
// whole sentence gives, in the same order, on every sentence of the
// shared test data.
func TestClausePatternsFindEveryMatch(t *testing.T) {
	t.Parallel()
	patterns := map[string]clausePattern{"enPrefer": enPrefer, "enPassion": enPassion, "enFavorite": enFavorite, "enName": enName,
		"enBirthday": enBirthday, "enIdentity": enIdentity, "enWork": enWork, "enStudy": enStudy, "enPlace": enPlace,
		"enLifelong": enLifelong, "enHabit": enHabit, "enHealth": enHealth, "enFamily": enFamily, "enHaveFamily": enHaveFamily,
		"enStatus": enStatus, "enGoal": enGoal, "enBeenDoing": enBeenDoing, "enDoing": enDoing, "enFuture": enFuture,
		"enPast": enPast, "enDated": enDated}
	texts := append(precheckTexts(t), "I I I went we went I'm I am", "my, my name is Ann", "Just call me Al, please call me Al",
		"xI went, _I went, I_ went, 9we went", "I have two dogs and I've got a cat")
	found := 0
	for _, text := range texts {
		w := newEnWords(text)
		for name, p := range patterns {
			want := p.re.FindAllStringSubmatchIndex(text, -1)
			var got [][]int
			p.matches(text, &w, func(m []int) bool {
				got = append(got, m)
				return true
			})
			if !cmp.Equal(got, want) {
				t.Errorf("%s in %q: at its first words %v, over the whole text %v", name, text, got, want)
			}
			found += len(want)
		}
	}
	if found < 500 {
		t.Errorf("%d matches: the test data did not exercise the patterns", found)
	}
}
