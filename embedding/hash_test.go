package embedding

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/imprint-dev/imprint/internal/testfiles"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/vector"
)

var _ imprint.Embedder = (*Hash)(nil)

func embedHash(t testing.TB, texts ...string) [][]float32 {
	t.Helper()
	v, err := NewHash().Embed(t.Context(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(v) != len(texts) {
		t.Fatalf("Embed returned %d vectors for %d texts", len(v), len(texts))
	}
	return v
}

func cosine(t testing.TB, a, b string) float32 {
	t.Helper()
	v := embedHash(t, a, b)
	return vector.Dot(v[0], v[1])
}

func TestHashNameAndDimensions(t *testing.T) {
	t.Parallel()
	h := NewHash()
	if h.Name() != "hash/384" || h.Name() != hashNameFor(HashDimensions) || h.Dimensions() != 384 {
		t.Errorf("Name, Dimensions = %q, %d; want hash/384, 384", h.Name(), h.Dimensions())
	}
}

func TestHashDeterministic(t *testing.T) {
	t.Parallel()
	texts := []string{"Deploy the API on Friday", "我住在北京", "Mixed 日本語テキスト and English", "naïve café", "x"}
	batch := embedHash(t, texts...)
	for i, text := range texts {
		// A fresh embedder, one text at a time, in reverse order.
		again := embedHash(t, texts[len(texts)-1-i], text)[1]
		if diff := cmp.Diff(batch[i], again); diff != "" {
			t.Errorf("%q embeds differently (-batch +single):\n%s", text, diff)
		}
	}
}

func TestHashUnitLength(t *testing.T) {
	t.Parallel()
	texts := []string{
		"a",
		"The quick brown fox jumps over the lazy dog.",
		"我住在北京",
		"한국어 문장도 잘 됩니다",
		"emoji only 🎉 and numbers 12345",
		strings.Repeat("long text with many repeated words ", 200),
	}
	for i, v := range embedHash(t, texts...) {
		if len(v) != HashDimensions {
			t.Fatalf("%q: %d components", texts[i], len(v))
		}
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: norm %v, want 1", texts[i], n)
		}
	}
}

func TestHashEmptyTextIsZero(t *testing.T) {
	t.Parallel()
	for i, v := range embedHash(t, "", "   ", "!!! ... ???", "🎉") {
		if n := norm(v); n != 0 || len(v) != HashDimensions {
			t.Errorf("text %d: norm %v len %d, want the zero vector of %d", i, n, len(v), HashDimensions)
		}
	}
}

func TestHashSimilarTextsScoreHigher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, similar, unrelated string
	}{
		{"shared words", "The user prefers dark mode in the editor", "Dark mode is what the user prefers", "Flights to Boston were cancelled because of snow"},
		{"paraphrase", "I moved to Berlin last spring for a new job", "Last spring she moved to Berlin because of her job", "The recipe needs two cups of flour and an egg"},
		{"word forms", "running integration tests against postgres", "the integration test runner uses Postgres", "my daughter loves painting sunsets"},
		{"code identifiers", "call embedding.NewHash() before Embed", "NewHash returns the hashing embedder", "book a table for four at eight"},
		{"chinese", "我住在北京", "北京的天气", "今天股市大跌"},
		{"japanese", "東京で寿司を食べました", "東京の寿司はおいしい", "明日は雨が降るでしょう"},
		{"mixed script", "我们用 SQLite 存储记忆", "SQLite 存储很快", "The weather in Rome is sunny"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim, unrel := cosine(t, tc.text, tc.similar), cosine(t, tc.text, tc.unrelated)
			if sim <= unrel || sim < 0.15 {
				t.Errorf("cos(similar) = %.3f, cos(unrelated) = %.3f; want similar > unrelated and >= 0.15", sim, unrel)
			}
		})
	}
}

func TestHashCJKSharesSignal(t *testing.T) {
	t.Parallel()
	// Only 北京 (two unigrams and one bigram) is shared.
	if c := cosine(t, "我住在北京", "北京的天气"); c < 0.2 {
		t.Errorf("cos(我住在北京, 北京的天气) = %.3f, want >= 0.2", c)
	}
	// A shared character pair weighs more than shared characters alone.
	pair, chars := cosine(t, "北京大学", "北京饭店"), cosine(t, "北京大学", "京北店饭")
	if pair <= chars {
		t.Errorf("cos with shared pair %.3f <= cos with shared characters only %.3f", pair, chars)
	}
}

// TestHashGolden pins components of known texts: a failure means the
// hashing scheme changed, which requires re-embedding every stored vector
// and a new HashName.
func TestHashGolden(t *testing.T) {
	t.Parallel()
	type comp struct {
		I int
		V float32
	}
	tests := []struct {
		text string
		want []comp // the five largest components by magnitude
	}{
		{"The user prefers dark mode.", []comp{{80, -0.2946278}, {155, 0.2946278}, {305, -0.2946278}, {354, -0.2946278}, {5, 0.1767767}}},
		{"我住在北京", []comp{{180, -0.4364358}, {284, -0.4364358}, {326, -0.4364358}, {373, 0.4364358}, {89, 0.2182179}}},
		{"imprint stores memories in SQLite", []comp{{327, -0.3162278}, {170, 0.2635231}, {341, 0.2635231}, {368, -0.2635231}, {369, 0.2635231}}},
	}
	for _, tc := range tests {
		v := embedHash(t, tc.text)[0]
		got := topComponents(v, 5)
		var gotC []comp
		for _, i := range got {
			gotC = append(gotC, comp{i, v[i]})
		}
		if diff := cmp.Diff(tc.want, gotC, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
			t.Errorf("%q changed (-want +got); the hashing scheme changed, which requires re-embedding:\n%s", tc.text, diff)
		}
	}
}

// topComponents returns the indexes of the n largest |v[i]|, ties by index.
func topComponents(v []float32, n int) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return math.Abs(float64(v[idx[a]])) > math.Abs(float64(v[idx[b]]))
	})
	return idx[:n]
}

// TestHashRecallOnLoCoMo checks that the hash embedder finds the evidence
// turns of real questions about long conversations far better than chance.
func TestHashRecallOnLoCoMo(t *testing.T) {
	t.Parallel()
	var convs []struct {
		QA []struct {
			Question string   `json:"question"`
			Evidence []string `json:"evidence"`
			Category int      `json:"category"`
		} `json:"qa"`
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	b, err := os.ReadFile(filepath.Join(sharedTestdata(), "locomo", "locomo-2conv.json"))
	if err != nil {
		t.Fatalf("read LoCoMo: %v", err)
	}
	if err := json.Unmarshal(b, &convs); err != nil {
		t.Fatalf("decode LoCoMo: %v", err)
	}
	hits, questions, turnsTotal := 0, 0, 0
	for _, c := range convs {
		var ids, texts []string
		for key, raw := range c.Conversation {
			if !strings.HasPrefix(key, "session_") || strings.HasSuffix(key, "date_time") {
				continue
			}
			var turns []struct {
				Speaker string `json:"speaker"`
				Text    string `json:"text"`
				DiaID   string `json:"dia_id"`
			}
			if err := json.Unmarshal(raw, &turns); err != nil {
				t.Fatalf("decode %s: %v", key, err)
			}
			for _, tr := range turns {
				ids = append(ids, strings.TrimSpace(tr.DiaID))
				texts = append(texts, tr.Speaker+": "+tr.Text)
			}
		}
		turnsTotal += len(texts)
		m := vector.NewMatrix(HashDimensions)
		for _, v := range embedHash(t, texts...) {
			m.Add(v)
		}
		for _, qa := range c.QA {
			if qa.Category == 5 || len(qa.Evidence) == 0 { // 5: unanswerable by design
				continue
			}
			questions++
			want := map[string]bool{}
			for _, e := range qa.Evidence {
				want[e] = true
			}
			for _, r := range m.TopK(embedHash(t, qa.Question)[0], 10, -1, nil) {
				if want[ids[r.Row]] {
					hits++
					break
				}
			}
		}
	}
	recall := float64(hits) / float64(questions)
	chance := 10 * float64(len(convs)) / float64(turnsTotal)
	t.Logf("recall@10 = %.3f over %d questions (chance about %.3f)", recall, questions, chance)
	if recall < 0.35 {
		t.Errorf("recall@10 = %.3f, want >= 0.35 (it was 0.45 when the scheme was set)", recall)
	}
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// sharedTestdata returns the repository's testdata folder.
func sharedTestdata() string { return testfiles.Dir() }

func TestHashHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := NewHash().Embed(ctx, []string{"a"}); err == nil {
		t.Error("Embed with a cancelled context succeeded")
	}
}

// BenchmarkHashEmbed measures the local embedder on real conversation turns.
func BenchmarkHashEmbed(b *testing.B) {
	b.ReportAllocs()
	var convs []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	raw, err := os.ReadFile(filepath.Join(sharedTestdata(), "locomo", "locomo-2conv.json"))
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(raw, &convs); err != nil {
		b.Fatal(err)
	}
	var texts []string
	size := 0
	for key, r := range convs[0].Conversation {
		var turns []struct {
			Text string `json:"text"`
		}
		if strings.HasPrefix(key, "session_") && json.Unmarshal(r, &turns) == nil {
			for _, tr := range turns {
				texts = append(texts, tr.Text)
				size += len(tr.Text)
			}
		}
	}
	h := NewHash()
	b.SetBytes(int64(size))
	for b.Loop() {
		if _, err := h.Embed(b.Context(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(texts)), "µs/text")
}

// hashBitsTexts are the turns of the shared LoCoMo, τ-bench and Claude
// Code test data, as their JSON writes them, and texts on the edges of
// the tokenizer (non-ASCII letters and digits, marks, case-folding
// letters, CJK between words, invalid UTF-8).
func hashBitsTexts(t testing.TB) []string {
	t.Helper()
	var texts []string
	for _, f := range []string{"locomo/locomo-2conv.json", "tau-bench/airline-40.json", "claude-code/representative_messages.jsonl", "claude-code/edge_cases.jsonl"} {
		raw, err := os.ReadFile(filepath.Join(sharedTestdata(), f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(?:text|content)": ?"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(raw), -1) {
			texts = append(texts, m[1])
		}
	}
	return append(texts, "", "!!!", "a", "I", "Ünïcödé ÀÉÎ façade naïve", "\u212aelvin \u017fong İstanbul ǅ ǈ", "x\u0301y\u0308z e\u0301",
		"٣٤٥ ⅷ ² ①", "mixed中文words日本語カタカナ한국어 text", "ÅNGSTRÖM straße ΣΊΣΥΦΟΣ", "bad \xff\xfe utf8 \xe2\x80", "tab\tnew\nline_under_score",
		"UPPER lower MiXeD 123abc abc123 a-b a'b", strings.Repeat("long ", 500))
}

// TestHashVectorsUnchanged pins every bit of the vectors of hashBitsTexts:
// a faster tokenizer must give the same vectors, or stored ones stop
// matching (see TestHashGolden).
func TestHashVectorsUnchanged(t *testing.T) {
	t.Parallel()
	texts := hashBitsTexts(t)
	vecs := embedHash(t, texts...)
	h := sha256.New()
	for _, v := range vecs {
		for _, x := range v {
			binary.Write(h, binary.LittleEndian, math.Float32bits(x))
		}
	}
	const want = "c006a7bef6701481124d1ef2d9f00ff540cc02105c2992cd0aaec157776a7b1f"
	if got := hex.EncodeToString(h.Sum(nil)); got != want || len(texts) < 1500 {
		t.Errorf("the vectors of %d texts hash to %s, want %s: the hashing scheme changed", len(texts), got, want)
	}
}
