package viewer

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// chartHours is how far back the overview's LLM charts reach.
const chartHours = 24

// maxChartCalls bounds the calls read for the charts.
const maxChartCalls = 20000

type overviewData struct {
	Counts       *imprint.RecordCounts
	LiveMemories int
	Jobs         imprint.JobStats
	Failed       []imprint.Job
	// DueSessions are sessions with rounds not extracted yet.
	DueSessions []imprint.Session
	Sessions    int
	Ops         []opUsage
	Charts      []chart
	Memories    []imprint.Memory
	Episodes    []episodeCard
}

type opUsage struct {
	Op               string
	Calls            int
	PromptTokens     int
	CompletionTokens int
	Errors           int
	AvgLatencyMS     int64
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request, v *view) error {
	ctx := r.Context()
	st := h.d.Store
	d := overviewData{}
	if b, ok := imprint.AsBrowser(st); ok {
		c, err := b.CountRecords(ctx, v.Scope)
		if err != nil {
			return fmt.Errorf("overview counts: %w", err)
		}
		d.Counts = &c
		eps, err := b.ListEpisodes(ctx, v.Scope, imprint.EpisodeFilter{Limit: 6})
		if err != nil {
			return fmt.Errorf("overview episodes: %w", err)
		}
		if d.Episodes, err = h.cards(ctx, v.Scope, eps); err != nil {
			return err
		}
	} else {
		n, err := st.CountMemories(ctx, v.Scope)
		if err != nil {
			return fmt.Errorf("overview memories: %w", err)
		}
		d.LiveMemories = n
	}
	sessions, err := st.ListSessions(ctx, v.Scope)
	if err != nil {
		return fmt.Errorf("overview sessions: %w", err)
	}
	d.Sessions = len(sessions)
	for _, s := range sessions {
		if s.RoundsSinceExtraction > 0 || s.ExtractionDue {
			d.DueSessions = append(d.DueSessions, s)
		}
	}
	sort.Slice(d.DueSessions, func(i, j int) bool { return d.DueSessions[i].UpdatedAt.After(d.DueSessions[j].UpdatedAt.Time) })
	d.DueSessions = d.DueSessions[:min(len(d.DueSessions), 10)]
	if d.Jobs, err = st.JobStats(ctx, &v.Scope); err != nil {
		return fmt.Errorf("overview jobs: %w", err)
	}
	if d.Failed, err = st.ListJobs(ctx, &v.Scope, imprint.JobFailed, 10); err != nil {
		return fmt.Errorf("overview failed jobs: %w", err)
	}
	since := time.Now().Add(-chartHours * time.Hour).Truncate(time.Hour)
	calls, err := st.LLMCallsOfScope(ctx, v.Scope, since)
	if err != nil {
		return fmt.Errorf("overview llm calls: %w", err)
	}
	if len(calls) > maxChartCalls {
		calls = calls[len(calls)-maxChartCalls:]
	}
	d.Ops, d.Charts = llmUsage(calls, since)
	if d.Memories, err = st.ListMemories(ctx, v.Scope, imprint.MemoryFilter{Limit: 6}); err != nil {
		return fmt.Errorf("overview memories: %w", err)
	}
	v.Title, v.Nav, v.Data = "Overview", "overview", d
	return h.render(w, "overview", v)
}

// llmUsage sums the calls by op and draws them by hour since since.
func llmUsage(calls []imprint.LLMCall, since time.Time) ([]opUsage, []chart) {
	byOp := map[string]*opUsage{}
	var latency = map[string]int64{}
	series := map[string]*[3][chartHours + 1]float64{}
	var lat = map[string]*[chartHours + 1]float64{}
	for _, c := range calls {
		u := byOp[c.Op]
		if u == nil {
			u = &opUsage{Op: c.Op}
			byOp[c.Op] = u
			series[c.Op] = &[3][chartHours + 1]float64{}
			lat[c.Op] = &[chartHours + 1]float64{}
		}
		u.Calls++
		u.PromptTokens += c.PromptTokens
		u.CompletionTokens += c.CompletionTokens
		if c.Outcome != "" && c.Outcome != "ok" {
			u.Errors++
		}
		latency[c.Op] += c.Latency.Milliseconds()
		i := int(c.At.Sub(since) / time.Hour)
		if i < 0 || i > chartHours {
			continue
		}
		s := series[c.Op]
		s[0][i]++
		s[1][i] += float64(c.PromptTokens + c.CompletionTokens)
		lat[c.Op][i] += float64(c.Latency.Milliseconds())
	}
	ops := make([]opUsage, 0, len(byOp))
	for op, u := range byOp {
		u.AvgLatencyMS = latency[op] / int64(max(u.Calls, 1))
		ops = append(ops, *u)
		s := series[op]
		for i := range s[2] {
			if s[0][i] > 0 {
				s[2][i] = lat[op][i] / s[0][i]
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Op < ops[j].Op })
	var charts []chart
	for k, name := range []string{"calls per hour", "tokens per hour", "mean latency (ms)"} {
		var lines []line
		for i, u := range ops {
			lines = append(lines, line{Name: u.Op, Color: palette[i%len(palette)], Points: series[u.Op][k][:]})
		}
		charts = append(charts, drawChart(name, since, lines))
	}
	return ops, charts
}
