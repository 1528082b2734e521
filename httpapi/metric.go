package httpapi

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	imprint "github.com/imprint-dev/imprint"
)

// counters are the server's own metrics: what passed through it since it
// started.
type counters struct {
	messagesRecorded atomic.Int64
	traces           atomic.Int64
	memStore         atomic.Int64
	memUpdate        atomic.Int64
	memMerge         atomic.Int64
	memSkip          atomic.Int64
	jobFailures      atomic.Int64
}

// CountRecorded adds n to the messages-recorded metric, for L0 messages
// recorded outside POST /v1/messages (the text turns of live sessions).
func (s *Server) CountRecorded(n int) {
	if n > 0 {
		s.metrics.messagesRecorded.Add(int64(n))
	}
}

// observe counts what a published event reports.
func (c *counters) observe(e imprint.Event) {
	if strings.HasSuffix(e.Type, ".failed") {
		c.jobFailures.Add(1)
	}
	ec, ok := e.Payload.(imprint.EventCounter)
	if !ok {
		return
	}
	n := ec.EventCounts()
	c.traces.Add(int64(n.Traces))
	c.memStore.Add(int64(n.Stored))
	c.memUpdate.Add(int64(n.Updated))
	c.memMerge.Add(int64(n.Merged))
	c.memSkip.Add(int64(n.Skipped))
}

// getMetrics writes the Prometheus text exposition format.
func (s *Server) getMetrics(w http.ResponseWriter, r *http.Request) error {
	usage, err := s.llmUsage(r.Context())
	if err != nil {
		return err
	}
	jobs, err := s.d.Store.JobStats(r.Context(), nil)
	if err != nil {
		return fmt.Errorf("metrics jobs: %w", err)
	}
	totals, err := s.d.Store.Totals(r.Context())
	if err != nil {
		return fmt.Errorf("metrics totals: %w", err)
	}
	var b strings.Builder
	family := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	sample := func(name string, v float64, labels ...string) {
		b.WriteString(name)
		if len(labels) > 0 {
			b.WriteByte('{')
			for i := 0; i+1 < len(labels); i += 2 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%s=\"%s\"", labels[i], escapeLabel(labels[i+1]))
			}
			b.WriteByte('}')
		}
		b.WriteByte(' ')
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
		b.WriteByte('\n')
	}
	m := s.metrics
	family("imprint_messages_recorded_total", "counter", "L0 messages recorded through this server.")
	sample("imprint_messages_recorded_total", float64(m.messagesRecorded.Load()))
	family("imprint_traces_total", "counter", "Traces written by captures since the server started.")
	sample("imprint_traces_total", float64(m.traces.Load()))
	family("imprint_memories_total", "counter", "Extraction decisions on new memories since the server started.")
	for _, d := range []struct {
		name string
		v    *atomic.Int64
	}{{"store", &m.memStore}, {"update", &m.memUpdate}, {"merge", &m.memMerge}, {"skip", &m.memSkip}} {
		sample("imprint_memories_total", float64(d.v.Load()), "decision", d.name)
	}
	ops := make([]string, 0, len(usage))
	for op := range usage {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	family("imprint_llm_calls_total", "counter", "LLM call attempts by op.")
	for _, op := range ops {
		sample("imprint_llm_calls_total", float64(usage[op].Calls), "op", op)
	}
	family("imprint_llm_errors_total", "counter", "Failed LLM call attempts by op.")
	for _, op := range ops {
		sample("imprint_llm_errors_total", float64(usage[op].Errors), "op", op)
	}
	family("imprint_llm_tokens_total", "counter", "LLM tokens by op and kind (prompt or completion).")
	for _, op := range ops {
		sample("imprint_llm_tokens_total", float64(usage[op].PromptTokens), "op", op, "kind", "prompt")
		sample("imprint_llm_tokens_total", float64(usage[op].CompletionTokens), "op", op, "kind", "completion")
	}
	family("imprint_llm_latency_seconds", "summary", "LLM call latency by op.")
	for _, op := range ops {
		sample("imprint_llm_latency_seconds_sum", float64(usage[op].LatencyMS)/1000, "op", op)
		sample("imprint_llm_latency_seconds_count", float64(usage[op].Calls), "op", op)
	}
	family("imprint_jobs", "gauge", "Durable jobs by state (failed ones gave up).")
	for _, st := range []struct {
		name string
		v    int
	}{{"available", jobs.Available}, {"running", jobs.Running}, {"retryable", jobs.Retryable}, {"failed", jobs.Failed}} {
		sample("imprint_jobs", float64(st.v), "state", st.name)
	}
	family("imprint_job_failures_total", "counter", "Capture and extraction runs that failed since the server started.")
	sample("imprint_job_failures_total", float64(m.jobFailures.Load()))
	// What the store holds, whoever wrote it and whenever: unlike the
	// counters above, these survive a restart.
	family("imprint_stored_memories", "gauge", "Live memories in the store by type.")
	for _, typ := range []imprint.MemoryType{imprint.MemoryPersona, imprint.MemoryEpisodic, imprint.MemoryInstruction} {
		sample("imprint_stored_memories", float64(totals.Memories[typ]), "type", string(typ))
	}
	family("imprint_stored_traces", "gauge", "Traces in the store.")
	sample("imprint_stored_traces", float64(totals.Traces))
	family("imprint_stored_messages", "gauge", "L0 messages in the store.")
	sample("imprint_stored_messages", float64(totals.Messages))
	family("imprint_stored_sessions", "gauge", "Sessions in the store.")
	sample("imprint_stored_sessions", float64(totals.Sessions))
	family("imprint_event_streams", "gauge", "Open event streams.")
	sample("imprint_event_streams", float64(s.hub.count()))
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
	return nil
}

// escapeLabel escapes a label value as the text format requires.
func escapeLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}
