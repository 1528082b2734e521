package viewer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/httpapi"
)

// Every page renders the scope's records, and no stored text becomes
// markup.
func TestPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	seed(t, e.db)
	sc := q(scopeA)
	for _, c := range []struct {
		path  string
		wants []string
	}{
		{"/" + sc, []string{"<b>3</b> messages", "<b>1</b> episodes", "<b>1</b> traces", "<b>1</b> persona", "<b>1</b> episodic", "User prefers window seats &lt;b&gt;bold&lt;/b&gt;"}},
		{"/memories" + sc, []string{"User booked a flight to Lisbon", "User prefers window seats &lt;b&gt;"}},
		{"/memories" + sc + "&type=episodic", []string{"User booked a flight to Lisbon"}},
		{"/memories" + sc + "&q=lisbon", []string{"User booked a flight to Lisbon"}},
		{"/memories/mem-seat" + sc, []string{"v1 mem-old", "User likes aisle seats", "I prefer window seats &lt;script&gt;", "/sessions/s-1?agent=coder&amp;tenant=acme&amp;user=ana#msg-m1"}},
		{"/episodes" + sc, []string{`data-episode="ep-1"`, `class="badge captured"`}},
		{"/episodes/ep-1" + sc, []string{"get_reservation_details", "ABC123", "check the reservation before changing it", "adapter", "0.80", "usable", "120 ms", "&lt;img src=x"}},
		{"/sessions" + sc, []string{"s-1"}},
		{"/sessions/s-1" + sc, []string{`id="msg-m1"`, "User prefers window seats", "Book the Lisbon flight", "pending extraction"}},
		{"/search" + sc + "&q=lisbon+flight", []string{"User booked a flight to Lisbon", "&lt;imprint-recall&gt;", "tokens of 800"}},
		{"/live" + sc, []string{`id="feed"`, `data-episode="ep-1"`}},
	} {
		p := e.get(c.path)
		if p.status != 200 {
			t.Errorf("GET %s: %d\n%s", c.path, p.status, p.body)
			continue
		}
		has(t, "GET "+c.path, p, c.wants...)
		for _, bad := range []string{"<script>alert", "<b>bold", "<img src=x"} {
			if strings.Contains(p.body, bad) {
				t.Errorf("GET %s: stored text became markup (%q)", c.path, bad)
			}
		}
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", c.path, csp)
		}
	}
	// The workspace filter keeps that workspace's memories.
	p := e.get("/memories" + sc + "&workspace=proj-x")
	if !strings.Contains(p.body, "Lisbon on 20 May") || strings.Contains(p.body, "window seats") {
		t.Errorf("memories of workspace proj-x: want the Lisbon memory only:\n%s", p.body)
	}
	// Another scope sees none of it.
	p = e.get("/memories?tenant=acme&user=ana&agent=other")
	if p.status != 200 || strings.Contains(p.body, "Lisbon") {
		t.Errorf("another scope's memories page: %d, shows scope A's memory: %v", p.status, strings.Contains(p.body, "Lisbon"))
	}
	if p := e.get("/memories/mem-seat?tenant=acme&user=ana&agent=other"); p.status != 404 {
		t.Errorf("scope A's memory asked in another scope: %d, want 404", p.status)
	}
	if p := e.get("/nope"); p.status != 404 {
		t.Errorf("GET /nope: %d, want 404", p.status)
	}
}

// The overview sums the scope's LLM calls by op and draws calls, tokens
// and latency by hour as inline SVG; another scope's calls are not in it.
func TestOverviewLLMCharts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	ctx := context.Background()
	now := time.Now()
	for i, c := range []imprint.LLMCall{
		{Op: "extract.l1.v1", Scope: scopeA, PromptTokens: 900, CompletionTokens: 100, Latency: 800 * time.Millisecond, Outcome: "ok", At: imprint.At(now.Add(-3 * time.Hour))},
		{Op: "extract.l1.v1", Scope: scopeA, PromptTokens: 700, CompletionTokens: 50, Latency: 400 * time.Millisecond, Outcome: "llm_timeout", At: imprint.At(now.Add(-time.Hour))},
		{Op: "capture.alpha.v1", Scope: scopeA, PromptTokens: 200, CompletionTokens: 20, Latency: 100 * time.Millisecond, Outcome: "ok", At: imprint.At(now)},
		{Op: "other.scope.v1", Scope: imprint.Scope{Tenant: "zeta", User: "u", Agent: "a"}, PromptTokens: 5, At: imprint.At(now)},
	} {
		if err := e.db.RecordLLMCall(ctx, c); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	p := e.get("/" + q(scopeA))
	has(t, "the overview", p, "<code>extract.l1.v1</code></td><td>2</td><td>1600</td><td>150</td><td>1</td><td>600 ms</td>",
		"<code>capture.alpha.v1</code></td><td>1</td>", "calls per hour", "tokens per hour", "mean latency (ms)", "<polyline")
	if strings.Count(p.body, "<polyline") != 6 {
		t.Errorf("the overview draws %d lines, want 2 ops × 3 charts", strings.Count(p.body, "<polyline"))
	}
	if strings.Contains(p.body, "other.scope.v1") {
		t.Errorf("the overview shows another scope's LLM calls")
	}
}

// An episode's badge says where its capture is: capturing while its job
// is pending, failed when the job gave up, captured once saved (also when
// it had no step to save).
func TestEpisodeBadges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	ctx := context.Background()
	for _, id := range []string{"ep-wait", "ep-empty", "ep-fail"} {
		ep := imprint.Episode{ID: id, SessionID: "s-b", Scope: scopeA, Status: imprint.EpisodeFinalized, ClosedBy: imprint.ClosedFinalized,
			Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: "hello"}}}
		if err := e.db.SaveEpisode(ctx, ep); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"ep-fail", "ep-wait"} {
		if _, _, err := e.db.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobCapture, Scope: scopeA, SessionID: "s-b", EpisodeID: id, MaxAttempts: 1}); err != nil {
			t.Fatal(err)
		}
		if id == "ep-fail" {
			jobs, err := e.db.ClaimJobs(ctx, time.Now().Add(time.Minute), 1)
			if err != nil || len(jobs) != 1 {
				t.Fatalf("claim: %v %v", jobs, err)
			}
			if err := e.db.FailJob(ctx, jobs[0].ID, "llm down", time.Now(), true); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := e.get("/episodes" + q(scopeA))
	for id, want := range map[string]string{"ep-wait": "capturing", "ep-empty": "captured", "ep-fail": "failed"} {
		card := `data-episode="` + id + `">`
		i := strings.Index(p.body, card)
		if i < 0 {
			t.Errorf("no card for %s", id)
			continue
		}
		if rest := p.body[i:]; !strings.Contains(rest[:min(len(rest), 400)], `class="badge `+want+`"`) {
			t.Errorf("%s's badge: want %s in\n%s", id, want, rest[:min(len(rest), 400)])
		}
	}
}
