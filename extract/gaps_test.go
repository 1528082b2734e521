package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/sqlite"
)

// recallFaultStore is the real SQLite store (every method of sqlite.DB,
// so the exact-text pre-check and term counts work as in production) with
// the recall queries it receives recorded. vecErr, when set, fails the
// vector recall queries; failProbe fails also the one-row probe that tells
// whether the scope holds vectors. textErr, when set, fails every keyword
// query.
type recallFaultStore struct {
	*sqlite.DB
	vecErr, textErr error
	failProbe       bool

	mu sync.Mutex
	vq []imprint.VectorQuery
	tq []imprint.TextQuery
}

// isProbe reports whether q is the vector tier's availability probe (any
// score, one row) rather than a recall query.
func isProbe(q imprint.VectorQuery) bool { return q.MinScore == -1 && q.Limit == 1 }

func (s *recallFaultStore) SearchVector(ctx context.Context, q imprint.VectorQuery) ([]imprint.Hit, error) {
	s.mu.Lock()
	s.vq = append(s.vq, q)
	s.mu.Unlock()
	if s.vecErr != nil && (s.failProbe || !isProbe(q)) {
		return nil, s.vecErr
	}
	return s.DB.SearchVector(ctx, q)
}

func (s *recallFaultStore) SearchText(ctx context.Context, q imprint.TextQuery) ([]imprint.Hit, error) {
	s.mu.Lock()
	s.tq = append(s.tq, q)
	s.mu.Unlock()
	if s.textErr != nil {
		return nil, s.textErr
	}
	return s.DB.SearchText(ctx, q)
}

// recallQueries returns the vector recall queries (probes left out) and
// the keyword queries received.
func (s *recallFaultStore) recallQueries() ([]imprint.VectorQuery, []imprint.TextQuery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var vq []imprint.VectorQuery
	for _, q := range s.vq {
		if !isProbe(q) {
			vq = append(vq, q)
		}
	}
	return vq, append([]imprint.TextQuery(nil), s.tq...)
}

// withFaultStore makes the runner use fs over the env's database.
func withFaultStore(fs *recallFaultStore) envOpt {
	return func(e *testEnv) {
		fs.DB = e.db
		e.deps.Store = fs
	}
}

var errIndexDown = fmt.Errorf("search index: %w", imprint.ErrUnavailable)

// TestVectorRecallFailureFallsBackToKeywords: when the vector search fails,
// dedup recalls candidates by keywords, the judge gets those candidates,
// and the result carries a dedup warning.
func TestVectorRecallFailureFallsBackToKeywords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// failProbe fails the availability probe too: the tier is then
		// never vector, and keyword recall is the first tier tried.
		failProbe bool
		wantVec   int // vector recall queries attempted
		wantWarn  int // dedup/unavailable warnings
	}{
		{name: "recall query fails", wantVec: 1, wantWarn: 1},
		{name: "probe fails", failProbe: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := &recallFaultStore{vecErr: errIndexDown, failProbe: tt.failProbe}
			cfg := smallConfig(10, 5)
			cfg.RecallMinScore = 0.05
			e := newTestEnv(t, cfg, withEmbedder(), withFaultStore(fs))
			bike := e.putMemory("The user owns a red bicycle.", imprint.MemoryPersona)
			e.putMemory("Quarterly revenue figures were discussed.", imprint.MemoryEpisodic)
			e.srv.Handle(OpExtract, rememberExtractor(t, "Bikes"))
			e.srv.Handle(OpDedup, storeAllJudge(t))
			e.record("s1", e.baseDay, "remember: The user owns a red bicycle with a wicker basket.")

			res, _, err := e.runner.ExtractNext(e.ctx, e.scope, "s1")
			if err != nil || !res.Success {
				t.Fatalf("window failed: %+v, %v", res, err)
			}
			vq, tq := fs.recallQueries()
			if len(vq) != tt.wantVec {
				t.Errorf("%d vector recall queries, want %d", len(vq), tt.wantVec)
			}
			if len(tq) != 1 || tq[0].Kind != imprint.KindMemory || tq[0].Scope != e.scope || tq[0].Limit != ftsFetch {
				t.Fatalf("keyword queries = %+v, want one memory query of limit %d in the scope", tq, ftsFetch)
			}
			if diff := cmp.Diff(recordIDs(res.Records), tq[0].ExcludeIDs); diff != "" {
				t.Errorf("keyword query ExcludeIDs (-batch +got):\n%s", diff)
			}
			// The judge gets the keyword tier's candidates: the stored
			// bicycle memory, not the unrelated one.
			reqs := e.srv.RequestsFor(OpDedup)
			if len(reqs) != 1 {
				t.Fatalf("%d judge calls, want 1 with the keyword candidates", len(reqs))
			}
			j := parseJudge(t, reqs[0].User)
			if len(j.NewMemories) != 1 {
				t.Fatalf("judge doc new memories = %+v, want 1", j.NewMemories)
			}
			if diff := cmp.Diff([]string{bike.ID}, j.NewMemories[0].CandidateIDs); diff != "" {
				t.Errorf("candidate ids (-want +got):\n%s", diff)
			}
			if len(j.Candidates) != 1 || j.Candidates[0].ID != bike.ID || j.Candidates[0].Content != bike.Content {
				t.Errorf("judge candidates = %+v, want the bicycle memory", j.Candidates)
			}
			if got := warningCodes(res.Warnings)["dedup/unavailable"]; got != tt.wantWarn {
				t.Errorf("dedup/unavailable warnings = %d, want %d: %+v", got, tt.wantWarn, res.Warnings)
			}
			if res.Decisions != (Decisions{Store: 1}) {
				t.Errorf("decisions = %+v, want the judge's store", res.Decisions)
			}
		})
	}
}

// TestKeywordRecallFailureStoresAllWithoutJudge: when the keyword tier
// fails as well (or is the only tier and fails), no memory has candidates:
// all are stored, the judge is not called, and the result warns.
func TestKeywordRecallFailureStoresAllWithoutJudge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		embedder bool
		vecErr   error
		wantVec  int // vector recall queries attempted
		wantWarn int // dedup/unavailable warnings: vector failure + one per keyword query
	}{
		{name: "vector and keyword recall fail", embedder: true, vecErr: errIndexDown, wantVec: 1, wantWarn: 1 + 2},
		{name: "keyword recall fails without vectors", wantWarn: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := &recallFaultStore{vecErr: tt.vecErr, textErr: errIndexDown}
			cfg := smallConfig(10, 5)
			cfg.RecallMinScore = 0.05
			opts := []envOpt{withFaultStore(fs)}
			if tt.embedder {
				opts = append(opts, withEmbedder())
			}
			e := newTestEnv(t, cfg, opts...)
			// Related memories the judge would see if recall worked.
			e.putMemory("The user likes green tea.", imprint.MemoryPersona)
			e.putMemory("The user likes iced coffee.", imprint.MemoryPersona)
			e.srv.Handle(OpExtract, rememberExtractor(t, "Drinks"))
			e.srv.Handle(OpDedup, storeAllJudge(t))
			e.record("s1", e.baseDay,
				"remember: The user likes green tea with honey.",
				"remember: The user likes iced coffee in summer.")

			res, _, err := e.runner.ExtractNext(e.ctx, e.scope, "s1")
			if err != nil || !res.Success {
				t.Fatalf("a recall failure failed the window: %+v, %v", res, err)
			}
			if n := len(e.srv.RequestsFor(OpDedup)); n != 0 {
				t.Errorf("%d judge calls without candidates, want none", n)
			}
			vq, tq := fs.recallQueries()
			if len(vq) != tt.wantVec || len(tq) != 2 {
				t.Errorf("%d vector and %d keyword recall queries, want %d and 2", len(vq), len(tq), tt.wantVec)
			}
			if res.Decisions != (Decisions{Store: 2}) || res.StoredCount != 2 || len(res.Records) != 2 {
				t.Errorf("result = %+v, want both memories stored", res)
			}
			if got := warningCodes(res.Warnings)["dedup/unavailable"]; got != tt.wantWarn {
				t.Errorf("dedup/unavailable warnings = %d, want %d: %+v", got, tt.wantWarn, res.Warnings)
			}
			if n := len(e.live()); n != 4 {
				t.Errorf("%d live memories, want 4 (2 earlier + 2 stored)", n)
			}
			if n := e.pending("s1"); n != 0 {
				t.Errorf("%d messages still pending", n)
			}
		})
	}
}

// timeoutSpy is an imprint.LLM that records the timeout of each request by
// op before passing it to the real client.
type timeoutSpy struct {
	imprint.LLM
	mu       sync.Mutex
	timeouts map[string][]time.Duration
}

func (s *timeoutSpy) Complete(ctx context.Context, req imprint.LLMRequest) (imprint.LLMResponse, error) {
	s.mu.Lock()
	s.timeouts[req.Op] = append(s.timeouts[req.Op], req.Timeout)
	s.mu.Unlock()
	return s.LLM.Complete(ctx, req)
}

// TestLLMCallsUseTheConfiguredTimeout: the extraction call and the judge
// call are both bounded by extraction.llm_timeout (its default when unset).
func TestLLMCallsUseTheConfiguredTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		llmTimeout time.Duration
		want       time.Duration
	}{
		{"configured", 7*time.Second + 300*time.Millisecond, 7*time.Second + 300*time.Millisecond},
		{"unset takes the default", 0, DefaultConfig().LLMTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := smallConfig(10, 5)
			cfg.LLMTimeout = tt.llmTimeout
			spy := &timeoutSpy{timeouts: map[string][]time.Duration{}}
			e := newTestEnv(t, cfg, func(e *testEnv) {
				spy.LLM = e.deps.LLM
				e.deps.LLM = spy
			})
			e.putMemory("The user likes green tea.", imprint.MemoryPersona)
			e.srv.Handle(OpExtract, rememberExtractor(t, "Tea"))
			e.srv.Handle(OpDedup, storeAllJudge(t))
			e.record("s1", e.baseDay, "remember: The user likes green tea with honey.")
			res, _, err := e.runner.ExtractNext(e.ctx, e.scope, "s1")
			if err != nil || !res.Success {
				t.Fatalf("window failed: %+v, %v", res, err)
			}
			want := map[string][]time.Duration{OpExtract: {tt.want}, OpDedup: {tt.want}}
			spy.mu.Lock()
			defer spy.mu.Unlock()
			if diff := cmp.Diff(want, spy.timeouts); diff != "" {
				t.Errorf("request timeouts by op (-want +got):\n%s", diff)
			}
		})
	}
}

// stepClock is a clock that moves one step forward on every reading, so
// that every stage of a window takes a measurable time.
type stepClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// l1Metric is the l1_extraction log record's fields this file checks.
type l1Metric struct {
	Msg         string `json:"msg"`
	Success     bool   `json:"success"`
	JudgeCalled bool   `json:"dedup_judge_called"`
	ExtractMs   *int64 `json:"extract_ms"`
	DedupMs     *int64 `json:"dedup_ms"`
	TotalMs     *int64 `json:"total_ms"`
}

// l1Metrics reads the l1_extraction records of a JSON log.
func l1Metrics(t *testing.T, logs []byte) []l1Metric {
	t.Helper()
	var out []l1Metric
	for _, line := range bytes.Split(bytes.TrimSpace(logs), []byte("\n")) {
		var m l1Metric
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line: %v\n%s", err, line)
		}
		if m.Msg == "l1_extraction" {
			out = append(out, m)
		}
	}
	return out
}

// TestL1ExtractionMetricDurations: the l1_extraction metric reports the
// extraction, dedup and total durations of the window in milliseconds;
// extraction and dedup are parts of the total. A window whose extraction
// call fails reports the time spent on it and no dedup time.
func TestL1ExtractionMetricDurations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		extract     func(t *testing.T) func(llmtest.Request) llmtest.Reply
		wantSuccess bool
		wantJudge   bool
		wantDedup   bool // dedup_ms > 0
	}{
		{name: "judged window", extract: func(t *testing.T) func(llmtest.Request) llmtest.Reply { return rememberExtractor(t, "Tea") },
			wantSuccess: true, wantJudge: true, wantDedup: true},
		{name: "failed extraction", extract: func(*testing.T) func(llmtest.Request) llmtest.Reply {
			return func(llmtest.Request) llmtest.Reply { return llmtest.Status(401) }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			e := newTestEnv(t, smallConfig(10, 5), func(e *testEnv) {
				e.deps.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
			})
			clock := &stepClock{t: e.baseDay, step: time.Second}
			e.runner.now = clock.now
			e.putMemory("The user likes green tea.", imprint.MemoryPersona)
			e.srv.Handle(OpExtract, tt.extract(t))
			e.srv.Handle(OpDedup, storeAllJudge(t))
			e.record("s1", e.baseDay, "remember: The user likes green tea with honey.", "remember: The user likes oolong tea.")
			res, _, _ := e.runner.ExtractNext(e.ctx, e.scope, "s1")
			if res.Success != tt.wantSuccess {
				t.Fatalf("success = %v, want %v: %+v", res.Success, tt.wantSuccess, res)
			}
			ms := l1Metrics(t, logs.Bytes())
			if len(ms) != 1 {
				t.Fatalf("%d l1_extraction records, want 1:\n%s", len(ms), logs.String())
			}
			m := ms[0]
			if m.ExtractMs == nil || m.DedupMs == nil || m.TotalMs == nil {
				t.Fatalf("metric lacks a duration (extract_ms, dedup_ms, total_ms): %s", logs.String())
			}
			if m.Success != tt.wantSuccess || m.JudgeCalled != tt.wantJudge {
				t.Errorf("metric success %v judge %v, want %v %v", m.Success, m.JudgeCalled, tt.wantSuccess, tt.wantJudge)
			}
			ext, ded, tot := *m.ExtractMs, *m.DedupMs, *m.TotalMs
			if ext <= 0 {
				t.Errorf("extract_ms = %d, want > 0 (the clock moved during extraction)", ext)
			}
			if tt.wantDedup && ded <= 0 {
				t.Errorf("dedup_ms = %d, want > 0 (the clock moved during dedup)", ded)
			}
			if !tt.wantDedup && ded != 0 {
				t.Errorf("dedup_ms = %d, want 0 (no dedup ran)", ded)
			}
			if tot < ext+ded {
				t.Errorf("extract_ms %d + dedup_ms %d exceed total_ms %d", ext, ded, tot)
			}
		})
	}
}
