package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
	"github.com/imprint-dev/imprint/search"
)

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestHealthzNeedsNoToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Token: testToken})
	r := e.do("GET", "/healthz", nil)
	if r.status != http.StatusOK || !cmp.Equal(r.json(t), map[string]any{"status": "ok"}) {
		t.Fatalf("GET /healthz without a token: %d %s", r.status, r.body)
	}
	if err := (&Client{BaseURL: e.ts.URL}).Health(context.Background()); err != nil {
		t.Fatalf("client Health without token: %v", err)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Token: testToken})
	msgBody := `{"session_id":"s1","messages":[{"role":"user","content":"hello there"}]}`
	endpoints := []struct{ method, path, body string }{
		{"GET", "/v1/status", ""},
		{"GET", "/v1/memories", ""},
		{"GET", "/v1/search?q=x", ""},
		{"GET", "/v1/recall?q=x", ""},
		{"GET", "/v1/events", ""},
		{"GET", "/metrics", ""},
		{"GET", "/", ""},
		{"POST", "/v1/messages", msgBody},
		{"POST", "/v1/episodes", `{"session_id":"s1","turns":[{"role":"user","content":"hi"}]}`},
		{"POST", "/v1/sessions/s1/turns", `{"turns":[{"role":"user","content":"hi"}]}`},
		{"POST", "/v1/sessions/s1/end", ""},
		{"POST", "/v1/sessions/s1/finalize", `{}`},
		{"POST", "/v1/sessions/s1/extract", ""},
		{"GET", "/v1/episodes/e1", ""},
		{"GET", "/v1/episodes/e1/traces", ""},
		{"GET", "/v1/traces", ""},
		{"GET", "/v1/traces/t1", ""},
		{"GET", "/v1/memories/m1", ""},
		{"GET", "/v1/no-such-route", ""},
	}
	headers := map[string][]string{
		"no header":   nil,
		"wrong token": {"Authorization", "Bearer nope"},
		"basic auth":  {"Authorization", "Basic " + testToken},
		"bare token":  {"Authorization", testToken},
		"prefix only": {"Authorization", "Bearer " + testToken[:4]},
	}
	before := e.counts()
	for name, h := range headers {
		for _, ep := range endpoints {
			var body any
			if ep.body != "" {
				body = ep.body
			}
			r := e.do(ep.method, ep.path, body, h...)
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s: %s %s = %d, want 401", name, ep.method, ep.path, r.status)
				continue
			}
			if code, _ := r.errCode(t); code != CodeUnauthorized {
				t.Errorf("%s: %s %s code %q", name, ep.method, ep.path, code)
			}
		}
	}
	e.unchanged(before, "unauthorized requests")

	r := e.do("POST", "/v1/messages", msgBody, "Authorization", "Bearer "+testToken)
	if r.status != http.StatusOK {
		t.Fatalf("with the token: %d %s", r.status, r.body)
	}
	_, err := (&Client{BaseURL: e.ts.URL, Token: "wrong"}).Status(context.Background(), imprint.DefaultScope())
	if !errors.Is(err, imprint.ErrUnauthorized) {
		t.Fatalf("client with a wrong token: %v, want ErrUnauthorized", err)
	}
	if _, err := e.c.Status(context.Background(), imprint.DefaultScope()); err != nil {
		t.Fatalf("client with the token: %v", err)
	}
}

func TestAuthOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	for _, p := range []string{"/v1/status", "/metrics", "/", "/healthz"} {
		if r := e.do("GET", p, nil, "Authorization", "Bearer anything"); r.status != http.StatusOK {
			t.Errorf("GET %s without a configured token: %d %s", p, r.status, r.body)
		}
	}
}

func TestPostMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	body := map[string]any{
		"session_id": "s1",
		"scope":      scopeA,
		"unknown":    "ignored",
		"messages": []map[string]any{
			{"id": "m1", "role": "user", "content": "I prefer window seats", "timestamp": "2026-05-01T10:00:00Z"},
			{"id": "m2", "role": "assistant", "content": []map[string]string{{"type": "text", "text": "Noted."}}, "timestamp": 1777629601000},
			{"id": "m3", "role": "user", "content": "   "},
		},
	}
	r := e.do("POST", "/v1/messages", body)
	if r.status != http.StatusOK {
		t.Fatalf("POST /v1/messages: %d %s", r.status, r.body)
	}
	got := r.json(t)
	wantKeys := []string{"filtered_messages", "message_ids", "recorded_count", "scheduler_notified", "session_id", "skipped", "vectors_written"}
	if !cmp.Equal(keys(got), wantKeys) {
		t.Fatalf("result keys %v, want %v", keys(got), wantKeys)
	}
	var res struct {
		RecordedCount     int      `json:"recorded_count"`
		MessageIDs        []string `json:"message_ids"`
		SchedulerNotified bool     `json:"scheduler_notified"`
		Skipped           []struct{ ID, Reason string }
	}
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatal(err)
	}
	if res.RecordedCount != 2 || !cmp.Equal(res.MessageIDs, []string{"m1", "m2"}) || len(res.Skipped) != 1 || res.Skipped[0].ID != "m3" {
		t.Fatalf("result %s", r.body)
	}
	m, err := e.db.GetMessage(context.Background(), scopeA, "s1", "m2")
	if err != nil || m.Content != "Noted." || m.Timestamp.String() != "2026-05-01T10:00:01.000Z" {
		t.Fatalf("stored m2 = %+v, %v", m, err)
	}
	if _, err := e.db.GetMessage(context.Background(), imprint.DefaultScope(), "s1", "m1"); !errors.Is(err, imprint.ErrNotFound) {
		t.Fatalf("message recorded in the default scope instead of the body's: %v", err)
	}

	// Posting again records nothing new; the client returns the same type.
	again, err := e.c.Record(context.Background(), scopeA, "s1", []imprint.Message{{ID: "m1", Role: imprint.RoleUser, Content: "I prefer window seats"}})
	if err != nil {
		t.Fatal(err)
	}
	if again.RecordedCount != 0 || len(again.Skipped) != 1 || again.Skipped[0].Reason != recordDuplicate {
		t.Fatalf("second post: %+v", again)
	}
	// Scope from the query string when the body has none.
	r = e.do("POST", "/v1/messages"+q(scopeB), `{"session_id":"s9","messages":[{"role":"user","content":"from the query scope"}]}`)
	if r.status != http.StatusOK {
		t.Fatalf("query scope: %d %s", r.status, r.body)
	}
	if _, err := e.db.GetSession(context.Background(), scopeB, "s9"); err != nil {
		t.Fatalf("session s9 not in the query's scope: %v", err)
	}
}

const recordDuplicate = "duplicate"

func TestBadBodiesWriteNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	// An open episode and a recorded message, so "nothing written" also
	// covers appends to existing rows.
	if _, _, err := e.c.AppendTurns(context.Background(), scopeA, "live", []imprint.Turn{{Role: imprint.RoleUser, Content: "open one"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.SubmitEpisode(context.Background(), imprint.Episode{ID: "ep-b", SessionID: "s", Scope: scopeB,
		Turns: []imprint.Turn{{Role: imprint.RoleUser, Content: "bob's"}}}); err != nil {
		t.Fatal(err)
	}
	big := `{"session_id":"s1","messages":[{"role":"user","content":"` + strings.Repeat("x", DefaultMaxBodyBytes) + `"}]}`
	long := strings.Repeat("t", 300)
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code, mentions     string
	}{
		{"messages invalid JSON", "POST", "/v1/messages", `{"session_id": "s1", "messages": [`, 400, CodeInvalid, "JSON"},
		{"messages not an object", "POST", "/v1/messages", `[1,2]`, 400, CodeInvalid, "object"},
		{"messages empty body", "POST", "/v1/messages", ``, 400, CodeInvalid, "body"},
		{"messages no session", "POST", "/v1/messages", `{"messages":[{"role":"user","content":"x"}]}`, 400, CodeInvalid, "session_id"},
		{"messages between people", "POST", "/v1/messages", `{"session_id":"s1","between_people":true,"messages":[{"role":"user","content":"x"}]}`, 400, CodeInvalid, "between_people"},
		{"messages no messages", "POST", "/v1/messages", `{"session_id":"s1"}`, 400, CodeInvalid, "messages"},
		{"messages not a list", "POST", "/v1/messages", `{"session_id":"s1","messages":{"role":"user"}}`, 400, CodeInvalid, "messages"},
		{"messages bad role", "POST", "/v1/messages", `{"session_id":"s1","messages":[{"role":"user","content":"ok"},{"role":"robot","content":"x"}]}`, 400, CodeInvalid, "messages[1].role"},
		{"messages no content", "POST", "/v1/messages", `{"session_id":"s1","messages":[{"role":"user"}]}`, 400, CodeInvalid, "messages[0].content"},
		{"messages bad time", "POST", "/v1/messages", `{"session_id":"s1","messages":[{"role":"user","content":"x","timestamp":"yesterday"}]}`, 400, CodeInvalid, "messages[0].timestamp"},
		{"messages empty tenant", "POST", "/v1/messages", `{"session_id":"s1","scope":{"tenant":""},"messages":[{"role":"user","content":"x"}]}`, 400, CodeInvalid, "scope.tenant"},
		{"messages blank agent", "POST", "/v1/messages", `{"session_id":"s1","scope":{"agent":"  "},"messages":[{"role":"user","content":"x"}]}`, 400, CodeInvalid, "scope.agent"},
		{"messages long user", "POST", "/v1/messages", `{"session_id":"s1","scope":{"user":"` + long + `"},"messages":[{"role":"user","content":"x"}]}`, 400, CodeInvalid, "scope.user"},
		{"messages scope not object", "POST", "/v1/messages", `{"session_id":"s1","scope":"acme","messages":[{"role":"user","content":"x"}]}`, 400, CodeInvalid, "scope"},
		{"messages empty query tenant", "POST", "/v1/messages?tenant=", `{"session_id":"s1","messages":[{"role":"user","content":"x"}]}`, 400, CodeInvalid, "tenant"},
		{"messages oversize", "POST", "/v1/messages", big, 413, CodeTooLarge, "bytes"},
		{"messages oversize chunked", "POST", "/v1/messages", io.MultiReader(strings.NewReader(big)), 413, CodeTooLarge, "bytes"},
		{"episode invalid JSON", "POST", "/v1/episodes", `{"session_id":`, 400, CodeInvalid, "JSON"},
		{"episode no session", "POST", "/v1/episodes", `{"turns":[{"role":"user","content":"x"}]}`, 400, CodeInvalid, "session_id"},
		{"episode no turns", "POST", "/v1/episodes", `{"session_id":"s1"}`, 400, CodeInvalid, "turns"},
		{"episode empty turns", "POST", "/v1/episodes", `{"session_id":"s1","turns":[]}`, 400, CodeInvalid, "turns"},
		{"episode bad role", "POST", "/v1/episodes", `{"session_id":"s1","turns":[{"role":"bot","content":"x"}]}`, 400, CodeInvalid, "turns[0].role"},
		{"episode bad closed_by", "POST", "/v1/episodes", `{"session_id":"s1","closed_by":"crashed","turns":[{"role":"user","content":"x"}]}`, 400, CodeInvalid, "closed_by"},
		{"episode other scope's id", "POST", "/v1/episodes", map[string]any{"id": "ep-b", "session_id": "s", "scope": scopeA, "turns": []map[string]string{{"role": "user", "content": "mine"}}}, 409, CodeConflict, ""},
		{"episode oversize", "POST", "/v1/episodes", big, 413, CodeTooLarge, "bytes"},
		{"turns invalid JSON", "POST", "/v1/sessions/live/turns", `{"turns": [}`, 400, CodeInvalid, "JSON"},
		{"turns missing", "POST", "/v1/sessions/live/turns", `{"scope":{"tenant":"acme"}}`, 400, CodeInvalid, "turns"},
		{"turns empty", "POST", "/v1/sessions/live/turns", `{"turns":[]}`, 400, CodeInvalid, "turns"},
		{"turns bad role", "POST", "/v1/sessions/live/turns", `{"turns":[{"role":"user","content":"a"},{"content":"b"}]}`, 400, CodeInvalid, "turns[1].role"},
		{"turns empty scope part", "POST", "/v1/sessions/live/turns", `{"scope":{"user":""},"turns":[{"role":"user","content":"a"}]}`, 400, CodeInvalid, "scope.user"},
		{"finalize bad closed_by", "POST", "/v1/sessions/live/finalize", `{"closed_by":"later"}`, 400, CodeInvalid, "closed_by"},
		{"finalize invalid JSON", "POST", "/v1/sessions/live/finalize", `{"closed_by":`, 400, CodeInvalid, "JSON"},
		{"finalize other scope", "POST", "/v1/sessions/live/finalize", map[string]any{"scope": scopeB}, 404, CodeNotFound, ""},
		{"end invalid JSON", "POST", "/v1/sessions/live/end", `nope`, 400, CodeInvalid, "JSON"},
		{"extract unknown session", "POST", "/v1/sessions/ghost/extract", ``, 404, CodeNotFound, ""},
	}
	for _, c := range cases {
		before := e.counts()
		r := e.do(c.method, c.path, c.body)
		if r.status != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, r.status, c.status, r.body)
			continue
		}
		code, msg := r.errCode(t)
		if code != c.code || !strings.Contains(msg, c.mentions) {
			t.Errorf("%s: error %s %q, want code %s naming %q", c.name, code, msg, c.code, c.mentions)
		}
		e.unchanged(before, c.name)
	}
}

func TestEpisodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	body := map[string]any{
		"session_id": "s1",
		"scope":      scopeA,
		"turns": []map[string]any{
			{"role": "user", "content": "Find flights SFO to NRT", "ts": "2026-05-01T10:00:00Z"},
			{"role": "assistant", "content": "Searching.", "ts": 1777629601000, "meta": map[string]any{"reflection": "search first"}},
			{"role": "tool", "content": "3 flights", "meta": map[string]any{"name": "search_flights", "input": map[string]string{"from": "SFO"}}},
		},
	}
	r := e.do("POST", "/v1/episodes", body)
	if r.status != http.StatusAccepted {
		t.Fatalf("POST /v1/episodes: %d %s", r.status, r.body)
	}
	id, _ := r.json(t)["episode_id"].(string)
	want := capture.DeriveEpisodeID(imprint.Episode{SessionID: "s1", Scope: scopeA, Turns: []imprint.Turn{
		{Role: imprint.RoleUser, Content: "Find flights SFO to NRT", TS: imprint.At(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))}}})
	if id != want {
		t.Fatalf("episode id %q, want the derived %q", id, want)
	}
	ep, err := e.c.Episode(ctx, scopeA, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Turns) != 3 || ep.Turns[2].Meta.Name != "search_flights" || ep.Status != imprint.EpisodeFinalized || ep.Turns[2].TS.IsZero() {
		t.Fatalf("stored episode %+v", ep)
	}
	stats, err := e.db.JobStats(ctx, &scopeA)
	if err != nil || stats.Available != 1 {
		t.Fatalf("capture job: %+v, %v", stats, err)
	}
	jobs, err := e.db.ClaimJobs(ctx, time.Now().Add(time.Hour), 10)
	if err != nil || len(jobs) != 1 || jobs[0].Kind != imprint.JobCapture || jobs[0].EpisodeID != id {
		t.Fatalf("queued jobs %+v, %v", jobs, err)
	}
	// Posting it again with an explicit id is accepted (capture upserts).
	again, err := e.c.SubmitEpisode(ctx, imprint.Episode{ID: id, SessionID: "s1", Scope: scopeA, Turns: ep.Turns})
	if err != nil || again != id {
		t.Fatalf("resubmit: %q, %v", again, err)
	}
	// Another scope cannot read it, nor take its id.
	if _, err := e.c.Episode(ctx, scopeB, id); !errors.Is(err, imprint.ErrNotFound) {
		t.Fatalf("other scope read: %v, want ErrNotFound", err)
	}
	if _, err := e.c.SubmitEpisode(ctx, imprint.Episode{ID: id, SessionID: "s1", Scope: scopeB, Turns: ep.Turns}); !errors.Is(err, imprint.ErrConflict) {
		t.Fatalf("other scope submit: %v, want ErrConflict", err)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	epID, n, err := e.c.AppendTurns(ctx, scopeA, "live", []imprint.Turn{
		{ID: "u1", Role: imprint.RoleUser, Content: "Book me a table for two"},
		{Role: imprint.RoleAssistant, Content: "Which evening?"},
	})
	if err != nil || epID == "" || n != 2 {
		t.Fatalf("append: %q %d %v", epID, n, err)
	}
	r := e.do("POST", "/v1/sessions/live/turns", map[string]any{"scope": scopeA, "turns": []map[string]any{
		{"role": "tool", "content": "ok", "meta": map[string]any{"name": "check_calendar"}},
		{"role": "user", "content": []map[string]string{{"type": "text", "text": "Friday"}}},
	}})
	if r.status != http.StatusOK {
		t.Fatalf("turns: %d %s", r.status, r.body)
	}
	got := r.json(t)
	if got["episode_id"] != epID || got["turn_count"] != float64(4) || len(got) != 2 {
		t.Fatalf("turns reply %s, want episode %s with 4 turns", r.body, epID)
	}
	// The text turns are L0 messages; the turn id is the message id.
	if m, err := e.db.GetMessage(ctx, scopeA, "live", "u1"); err != nil || m.Content != "Book me a table for two" {
		t.Fatalf("turn u1 as a message: %+v %v", m, err)
	}
	if p, _ := e.db.CountPending(ctx, scopeA, "live"); p != 3 {
		t.Fatalf("pending messages %d, want 3 (two user turns and one assistant turn)", p)
	}
	// Another scope has no open episode in this session.
	if _, err := e.c.Finalize(ctx, scopeB, "live", ""); !errors.Is(err, imprint.ErrNotFound) {
		t.Fatalf("finalize in another scope: %v", err)
	}
	r = e.do("POST", "/v1/sessions/live/finalize", map[string]any{"scope": scopeA, "closed_by": "abandoned"})
	if r.status != http.StatusAccepted || r.json(t)["episode_id"] != epID {
		t.Fatalf("finalize: %d %s", r.status, r.body)
	}
	if ep, err := e.db.GetEpisode(ctx, scopeA, epID); err != nil || ep.ClosedBy != imprint.ClosedAbandoned {
		t.Fatalf("closed episode %+v %v", ep, err)
	}
	if _, err := e.c.Finalize(ctx, scopeA, "live", imprint.ClosedFinalized); !errors.Is(err, imprint.ErrNotFound) {
		t.Fatalf("finalize with nothing open: %v, want ErrNotFound", err)
	}
	r = e.do("POST", "/v1/sessions/live/end"+q(scopeA), nil)
	if r.status != http.StatusAccepted {
		t.Fatalf("end: %d %s", r.status, r.body)
	}
	if diff := cmp.Diff(map[string]any{"episode_id": nil, "pending_messages": float64(3)}, r.json(t)); diff != "" {
		t.Fatalf("end reply (-want +got):\n%s", diff)
	}
	// End with an open episode closes it.
	ep2, _, err := e.c.AppendTurns(ctx, scopeA, "live", []imprint.Turn{{Role: imprint.RoleUser, Content: "and a taxi"}})
	if err != nil {
		t.Fatal(err)
	}
	closed, pending, err := e.c.End(ctx, scopeA, "live")
	if err != nil || closed == nil || *closed != ep2 || pending != 4 {
		t.Fatalf("end: %v %d %v, want %s and 4 pending", closed, pending, err, ep2)
	}
	stats, _ := e.db.JobStats(ctx, &scopeA)
	if stats.Available != 3 { // two captures and one extraction
		t.Fatalf("jobs %+v, want 3 available", stats)
	}
	n2, err := e.c.Extract(ctx, scopeA, "live")
	if err != nil || n2 != 4 {
		t.Fatalf("extract: %d %v", n2, err)
	}
	if stats, _ := e.db.JobStats(ctx, &scopeA); stats.Available != 3 {
		t.Fatalf("extract while one is queued must join it: %+v", stats)
	}
}

func TestReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	e.putMemory(imprint.Memory{ID: "m-old", Content: "Ana lives in Lisbon", Type: imprint.MemoryPersona, Priority: 50, SessionID: "s1", Scope: scopeA})
	e.putMemory(imprint.Memory{ID: "m-new", Content: "Ana lives in Porto", Type: imprint.MemoryPersona, Priority: 50, SessionID: "s1", Scope: scopeA, Version: 2}, "m-old")
	e.putMemory(imprint.Memory{ID: "m-ep", Content: "Ana flew to Tokyo", Type: imprint.MemoryEpisodic, Priority: 60, SessionID: "s2", Scope: scopeA})
	e.putMemory(imprint.Memory{ID: "m-bob", Content: "Bob lives in Rome", Type: imprint.MemoryPersona, Priority: 50, SessionID: "s1", Scope: scopeB})
	e.saveCapture(scopeA, "ep-1", "s1", imprint.Trace{ID: "t-0", StepKey: "0", StepIndex: 0, UserText: "first"}, imprint.Trace{ID: "t-1", StepKey: "1", StepIndex: 1, UserText: "second"})
	e.saveCapture(scopeA, "ep-2", "s2", imprint.Trace{ID: "t-2", StepKey: "0", UserText: "other"})
	e.saveCapture(scopeB, "ep-b", "s1", imprint.Trace{ID: "t-b", StepKey: "0", UserText: "bob"})

	ids := func(ms []imprint.Memory) []string {
		out := []string{}
		for _, m := range ms {
			out = append(out, m.ID)
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		f    imprint.MemoryFilter
		want []string
	}{
		{imprint.MemoryFilter{}, []string{"m-ep", "m-new"}},
		{imprint.MemoryFilter{AllVersions: true}, []string{"m-ep", "m-new", "m-old"}},
		{imprint.MemoryFilter{SessionID: "s2"}, []string{"m-ep"}},
		{imprint.MemoryFilter{Type: imprint.MemoryPersona}, []string{"m-new"}},
		{imprint.MemoryFilter{Limit: 1}, nil},
	} {
		ms, err := e.c.Memories(ctx, scopeA, c.f)
		if err != nil {
			t.Fatal(err)
		}
		if c.f.Limit == 1 {
			if len(ms) != 1 {
				t.Errorf("limit 1: %d memories", len(ms))
			}
			continue
		}
		if !cmp.Equal(ids(ms), c.want) {
			t.Errorf("memories %+v: %v, want %v", c.f, ids(ms), c.want)
		}
	}
	r := e.do("GET", "/v1/memories"+q(scopeA, "all_versions", "true"), nil)
	if r.status != 200 || !cmp.Equal(keys(r.json(t)), []string{"memories"}) {
		t.Fatalf("GET /v1/memories: %d %s", r.status, r.body)
	}
	mh, err := e.c.Memory(ctx, scopeA, "m-new")
	if err != nil || mh.Content != "Ana lives in Porto" || len(mh.History) != 1 || mh.History[0].ID != "m-old" {
		t.Fatalf("memory with history: %+v %v", mh, err)
	}
	r = e.do("GET", "/v1/memories/m-new"+q(scopeA), nil)
	if _, ok := r.json(t)["history"]; !ok || r.json(t)["content"] != "Ana lives in Porto" {
		t.Fatalf("GET /v1/memories/{id}: %s", r.body)
	}

	trs, err := e.c.EpisodeTraces(ctx, scopeA, "ep-1")
	if err != nil || len(trs) != 2 || trs[0].ID != "t-0" || trs[1].ID != "t-1" {
		t.Fatalf("episode traces: %+v %v", trs, err)
	}
	all, err := e.c.Traces(ctx, scopeA, imprint.TraceFilter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("scope traces: %d %v", len(all), err)
	}
	if s2, _ := e.c.Traces(ctx, scopeA, imprint.TraceFilter{SessionID: "s2"}); len(s2) != 1 || s2[0].ID != "t-2" {
		t.Fatalf("session traces: %+v", s2)
	}
	tr, err := e.c.Trace(ctx, scopeA, "t-1")
	if err != nil || tr.UserText != "second" {
		t.Fatalf("trace: %+v %v", tr, err)
	}

	// Another scope's records are 404, through the client and raw.
	for _, p := range []string{"/v1/memories/m-bob", "/v1/traces/t-b", "/v1/episodes/ep-b", "/v1/episodes/ep-b/traces", "/v1/memories/nope"} {
		r := e.do("GET", p+q(scopeA), nil)
		if code, _ := r.errCode(t); r.status != 404 || code != CodeNotFound {
			t.Errorf("GET %s in scope A: %d %s", p, r.status, r.body)
		}
	}
	if _, err := e.c.Memory(ctx, scopeA, "m-bob"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("client read of another scope's memory: %v", err)
	}
	if _, err := e.c.Trace(ctx, scopeB, "t-0"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("client read of another scope's trace: %v", err)
	}
	for _, p := range []string{"/v1/memories?limit=-1", "/v1/memories?limit=ten", "/v1/memories?type=facts", "/v1/memories?all_versions=maybe", "/v1/traces?limit=x", "/v1/memories?agent="} {
		if r := e.do("GET", p, nil); r.status != 400 {
			t.Errorf("GET %s: %d, want 400", p, r.status)
		}
	}
}

func TestSearchAndRecall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	e.putMemory(imprint.Memory{ID: "rule", Content: "Never book red-eye flights", Type: imprint.MemoryInstruction, Priority: -1, SessionID: "s1", Scope: scopeA})
	e.putMemory(imprint.Memory{ID: "rule2", Content: "Keep answers short", Type: imprint.MemoryInstruction, Priority: 80, SessionID: "s1", Scope: scopeA})
	e.putMemory(imprint.Memory{ID: "seat", Content: "Ana prefers window seats on flights", Type: imprint.MemoryPersona, Priority: 50, SessionID: "s1", Scope: scopeA})
	e.putMemory(imprint.Memory{ID: "bob", Content: "Bob prefers aisle seats on flights", Type: imprint.MemoryPersona, Priority: 50, SessionID: "s1", Scope: scopeB})
	if _, err := e.c.Record(ctx, scopeA, "s1", []imprint.Message{{ID: "msg", Role: imprint.RoleUser, Content: "Which seats do flights to Tokyo have?"}}); err != nil {
		t.Fatal(err)
	}

	hits, err := e.c.Search(ctx, imprint.SearchQuery{Scope: scopeA, Text: "window seats flights"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, string(h.Kind)+":"+h.ID)
	}
	if !slices.Contains(got, "memory:seat") || !slices.Contains(got, "message:msg") || slices.Contains(got, "memory:bob") {
		t.Fatalf("search hits %v: want scope A's memory and message, not Bob's", got)
	}
	r := e.do("GET", "/v1/search"+q(scopeA, "q", "window seats", "kind", "memory", "limit", "1"), nil)
	var hb struct{ Hits []map[string]any }
	if err := json.Unmarshal(r.body, &hb); err != nil || len(hb.Hits) != 1 {
		t.Fatalf("GET /v1/search: %s", r.body)
	}
	wantKeys := []string{"episode_id", "id", "kind", "score", "session_id", "source_message_ids", "text"}
	if !cmp.Equal(keys(hb.Hits[0]), wantKeys) {
		t.Fatalf("hit keys %v, want %v", keys(hb.Hits[0]), wantKeys)
	}
	for _, p := range []string{"/v1/search", "/v1/search?q=%20", "/v1/search?q=x&kind=facts", "/v1/search?q=x&limit=-2"} {
		if r := e.do("GET", p, nil); r.status != 400 {
			t.Errorf("GET %s: %d, want 400", p, r.status)
		}
	}

	rec, err := e.c.Recall(ctx, imprint.RecallQuery{Scope: scopeA, Text: "book flights with a window seat"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Hits) < 3 || rec.Hits[0].ID != "rule" || rec.Hits[1].ID != "rule2" || rec.Hits[2].ID != "seat" {
		t.Fatalf("recall hits %+v: want the instructions first, then the seat memory", rec.Hits)
	}
	if !strings.Contains(rec.Context, "Never book red-eye flights") || strings.Contains(rec.Context, "Bob") {
		t.Fatalf("recall context:\n%s", rec.Context)
	}
	// The block is enclosed in the tags the recorder strips.
	if !strings.HasPrefix(rec.Context, search.RecallOpenTag+"\n") || !strings.HasSuffix(rec.Context, "\n"+search.RecallCloseTag) {
		t.Fatalf("recall context not enclosed in %s … %s:\n%s", search.RecallOpenTag, search.RecallCloseTag, rec.Context)
	}
	// The tags, header, title and first rule take 37 tokens.
	r = e.do("GET", "/v1/recall"+q(scopeA, "q", "window seat", "budget_tokens", "40"), nil)
	var rr imprint.RecallResult
	if err := json.Unmarshal(r.body, &rr); err != nil || r.status != 200 {
		t.Fatalf("GET /v1/recall: %d %s", r.status, r.body)
	}
	if n := imprint.EstimateTokens(rr.Context); n > 40 || len(rr.Hits) == 0 || rr.Hits[0].ID != "rule" {
		t.Fatalf("budget 40: %d tokens, hits %+v:\n%s", n, rr.Hits, rr.Context)
	}
	if !cmp.Equal(keys(r.json(t)), []string{"context", "hits"}) {
		t.Fatalf("recall keys: %s", r.body)
	}
	if r := e.do("GET", "/v1/recall?budget_tokens=lots", nil); r.status != 400 {
		t.Errorf("bad budget: %d", r.status)
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	// One user round each: below every_n_rounds, so no extraction is queued.
	if _, err := e.c.Record(ctx, scopeA, "s1", []imprint.Message{{Role: imprint.RoleUser, Content: "one"}, {Role: imprint.RoleAssistant, Content: "two"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Record(ctx, scopeA, "s2", []imprint.Message{{Role: imprint.RoleUser, Content: "three"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Record(ctx, scopeB, "s1", []imprint.Message{{Role: imprint.RoleUser, Content: "bob"}}); err != nil {
		t.Fatal(err)
	}
	// A job that gave up, in scope A.
	if _, _, err := e.db.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobExtract, Scope: scopeA, SessionID: "s1", MaxAttempts: 1}); err != nil {
		t.Fatal(err)
	}
	claimed, err := e.db.ClaimJobs(ctx, time.Now().Add(time.Hour), 5)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if err := e.db.FailJob(ctx, claimed[0].ID, "llm_unavailable: provider down", time.Now(), true); err != nil {
		t.Fatal(err)
	}
	_ = e.calls.RecordLLMCall(ctx, imprint.LLMCall{Op: "extract.l1.v1", PromptTokens: 100, CompletionTokens: 20, Outcome: "ok", Latency: 1500 * time.Millisecond})
	_ = e.calls.RecordLLMCall(ctx, imprint.LLMCall{Op: "extract.l1.v1", PromptTokens: 90, Outcome: "llm_timeout"})

	r := e.do("GET", "/v1/status"+q(scopeA), nil)
	if r.status != 200 {
		t.Fatalf("status: %d %s", r.status, r.body)
	}
	var got map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"pending_messages": float64(3),
		"sessions": []any{
			map[string]any{"session_id": "s1", "pending_messages": float64(2), "last_extracted_at": nil},
			map[string]any{"session_id": "s2", "pending_messages": float64(1), "last_extracted_at": nil},
		},
		"jobs":        map[string]any{"available": float64(0), "running": float64(0), "retryable": float64(0), "failed": float64(1)},
		"failed_jobs": []any{map[string]any{"kind": "extract", "session_id": "s1", "attempts": float64(1), "last_error": "llm_unavailable: provider down"}},
		"llm":         map[string]any{"extract.l1.v1": map[string]any{"calls": float64(2), "prompt_tokens": float64(190), "completion_tokens": float64(20), "errors": float64(1)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("status (-want +got):\n%s", diff)
	}
	st, err := e.c.Status(ctx, scopeB)
	if err != nil || st.PendingMessages != 1 || len(st.FailedJobs) != 0 || st.Jobs.Failed != 0 {
		t.Fatalf("scope B status %+v %v", st, err)
	}
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? (\S+)$`)

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	if _, err := e.c.Record(ctx, scopeA, "s1", []imprint.Message{{Role: imprint.RoleUser, Content: "one"}, {Role: imprint.RoleAssistant, Content: "two"}}); err != nil {
		t.Fatal(err)
	}
	_ = e.calls.RecordLLMCall(ctx, imprint.LLMCall{Op: `capture.alpha.v1`, PromptTokens: 10, CompletionTokens: 3, Outcome: "ok", Latency: 250 * time.Millisecond})
	e.srv.Publish(ctx, imprint.Event{Type: EventCaptureDone, Scope: scopeA, Payload: capture.Event{Kind: capture.EventDone, Result: &capture.Result{TraceIDs: []string{"a", "b"}}}})
	e.srv.Publish(ctx, imprint.Event{Type: EventExtractionDone, Scope: scopeA, Payload: extract.Result{Success: true, Decisions: extract.Decisions{Store: 2, Skip: 1}}})
	e.srv.Publish(ctx, imprint.Event{Type: EventExtractionFailed, Scope: scopeA, Payload: map[string]string{"session_id": "s1"}})
	if _, _, err := e.db.EnqueueJob(ctx, imprint.Job{Kind: imprint.JobEmbed, Scope: scopeA}); err != nil {
		t.Fatal(err)
	}

	r := e.do("GET", "/metrics", nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("metrics: %d %s", r.status, r.header.Get("Content-Type"))
	}
	samples := map[string]float64{}
	for _, line := range strings.Split(strings.TrimRight(string(r.body), "\n"), "\n") {
		if strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %q is not `name{labels} value`", line)
		}
		v, err := strconv.ParseFloat(m[len(m)-1], 64)
		if err != nil {
			t.Fatalf("line %q: value: %v", line, err)
		}
		samples[strings.TrimSuffix(line, " "+m[len(m)-1])] = v
	}
	want := map[string]float64{
		`imprint_messages_recorded_total`:                                   2,
		`imprint_traces_total`:                                              2,
		`imprint_memories_total{decision="store"}`:                          2,
		`imprint_memories_total{decision="skip"}`:                           1,
		`imprint_memories_total{decision="update"}`:                         0,
		`imprint_llm_calls_total{op="capture.alpha.v1"}`:                    1,
		`imprint_llm_tokens_total{op="capture.alpha.v1",kind="prompt"}`:     10,
		`imprint_llm_tokens_total{op="capture.alpha.v1",kind="completion"}`: 3,
		`imprint_llm_latency_seconds_sum{op="capture.alpha.v1"}`:            0.25,
		`imprint_llm_latency_seconds_count{op="capture.alpha.v1"}`:          1,
		`imprint_jobs{state="available"}`:                                   1,
		`imprint_jobs{state="failed"}`:                                      0,
		`imprint_job_failures_total`:                                        1,
	}
	for k, v := range want {
		got, ok := samples[k]
		if !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
}

// metricSamples reads /metrics into sample (name{labels}) -> value.
func metricSamples(t *testing.T, e *env) map[string]float64 {
	t.Helper()
	r := e.do("GET", "/metrics", nil)
	if r.status != 200 {
		t.Fatalf("metrics: %d %s", r.status, r.body)
	}
	samples := map[string]float64{}
	for _, line := range strings.Split(strings.TrimRight(string(r.body), "\n"), "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %q is not `name{labels} value`", line)
		}
		v, err := strconv.ParseFloat(m[len(m)-1], 64)
		if err != nil {
			t.Fatalf("line %q: value: %v", line, err)
		}
		samples[strings.TrimSuffix(line, " "+m[len(m)-1])] = v
	}
	return samples
}

// TestMetricsStoreTotals checks that /metrics reports what the store holds
// as gauges, including what this server never saw (written before it
// started, by an import or another process), beside its counters since
// start, which stay at what passed through it.
func TestMetricsStoreTotals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	// Written straight to the store: as an earlier run or imprint import would.
	if _, err := e.db.AppendMessages(ctx, scopeA, "old", []imprint.Message{
		{ID: "m1", Role: imprint.RoleUser, Content: "I live in Porto", Timestamp: imprint.Now()},
		{ID: "m2", Role: imprint.RoleAssistant, Content: "Noted", Timestamp: imprint.Now()},
	}); err != nil {
		t.Fatal(err)
	}
	now := imprint.Now()
	for i, m := range []imprint.Memory{
		{ID: "p1", Content: "User lives in Porto", Type: imprint.MemoryPersona},
		{ID: "i1", Content: "Always answer in British English", Type: imprint.MemoryInstruction},
		{ID: "i2", Content: "Never deploy on a Friday", Type: imprint.MemoryInstruction},
	} {
		m.Scope, m.Version, m.CreatedAt, m.UpdatedAt = scopeB, 1, now, now
		m.ContentHash = fmt.Sprintf("h%d", i)
		if err := e.db.PutMemory(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	// And one message through this server.
	if _, err := e.c.Record(ctx, scopeA, "s1", []imprint.Message{{Role: imprint.RoleUser, Content: "one"}}); err != nil {
		t.Fatal(err)
	}
	samples := metricSamples(t, e)
	want := map[string]float64{
		`imprint_stored_messages`:                     3,
		`imprint_stored_sessions`:                     2,
		`imprint_stored_traces`:                       0,
		`imprint_stored_memories{type="persona"}`:     1,
		`imprint_stored_memories{type="instruction"}`: 2,
		`imprint_stored_memories{type="episodic"}`:    0,
		`imprint_messages_recorded_total`:             1,
		`imprint_memories_total{decision="store"}`:    0,
	}
	for k, v := range want {
		got, ok := samples[k]
		if !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Token: testToken, HeartbeatInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		evs []Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		var evs []Event
		err := e.c.Events(ctx, scopeA, func(ev Event) error {
			evs = append(evs, ev)
			if len(evs) == 2 {
				return errStop
			}
			return nil
		})
		done <- result{evs, err}
	}()
	waitFor(t, "the stream to subscribe", func() bool { return e.srv.hub.count() == 1 })
	// Bob's event and one published without a scope must not reach Ana's
	// stream.
	e.srv.Publish(ctx, imprint.Event{Type: "capture.started", Scope: scopeB, Payload: capture.Event{Kind: capture.EventStarted, EpisodeID: "ep-b", SessionID: "s2"}})
	e.srv.Publish(ctx, imprint.Event{Type: "capture.started", Payload: capture.Event{Kind: capture.EventStarted, EpisodeID: "ep-none", SessionID: "s0"}})
	e.srv.Publish(ctx, imprint.Event{Type: "capture.started", Scope: scopeA, Payload: capture.Event{Kind: capture.EventStarted, EpisodeID: "ep-1", SessionID: "s1"}})
	e.srv.Publish(ctx, imprint.Event{Type: "extraction.done", Scope: scopeA, Payload: extract.Result{Success: true, SessionID: "s1", Decisions: extract.Decisions{Store: 1}}})
	res := <-done
	if !errors.Is(res.err, errStop) {
		t.Fatalf("events: %v", res.err)
	}
	if len(res.evs) != 2 || res.evs[0].Name != "capture.started" || res.evs[1].Name != "extraction.done" {
		t.Fatalf("events %+v", res.evs)
	}
	var started map[string]any
	if err := json.Unmarshal(res.evs[0].Data, &started); err != nil || started["episode_id"] != "ep-1" {
		t.Fatalf("capture.started data %s", res.evs[0].Data)
	}
	var ex extract.Result
	if err := json.Unmarshal(res.evs[1].Data, &ex); err != nil || ex.SessionID != "s1" || ex.Decisions.Store != 1 {
		t.Fatalf("extraction.done data %s", res.evs[1].Data)
	}
	waitFor(t, "the stream to end", func() bool { return e.srv.hub.count() == 0 })

	// Close ends open streams: Events returns nil.
	go func() {
		done <- result{err: e.c.Events(context.Background(), scopeA, func(Event) error { return nil })}
	}()
	waitFor(t, "the second stream to subscribe", func() bool { return e.srv.hub.count() == 1 })
	e.srv.Close()
	if res := <-done; res.err != nil {
		t.Fatalf("stream after Close: %v", res.err)
	}
}

var errStop = errors.New("stop")

func TestEventsRawFormat(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{RequestTimeout: time.Nanosecond})
	req, err := http.NewRequest("GET", e.ts.URL+"/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	waitFor(t, "the stream to subscribe", func() bool { return e.srv.hub.count() == 1 })
	e.srv.Publish(t.Context(), imprint.Event{Type: "capture.failed", Scope: imprint.DefaultScope(), Payload: map[string]string{"episode_id": "x"}})
	e.srv.Close()
	body, _ := io.ReadAll(resp.Body)
	// The event stream is exempt from the (here, already expired) request timeout.
	if !strings.Contains(string(body), "event: capture.failed\ndata: {\"episode_id\":\"x\"}\n\n") {
		t.Fatalf("stream body %q", body)
	}
}

func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{RequestTimeout: time.Nanosecond})
	r := e.do("GET", "/v1/status", nil)
	if code, _ := r.errCode(t); r.status != 500 || code != CodeInternal {
		t.Fatalf("status past its deadline: %d %s", r.status, r.body)
	}
}

func TestMethodAndPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"POST", "/v1/status", 405, "GET, HEAD"},
		{"GET", "/v1/messages", 405, "POST"},
		{"PUT", "/v1/memories/x", 405, "GET, HEAD, PATCH, DELETE"},
		{"DELETE", "/v1/memories", 405, "GET, HEAD, POST"},
		{"POST", "/", 405, "GET, HEAD"},
		{"GET", "/v2/nothing", 404, ""},
		{"GET", "/v1/sessions/x/turns", 405, "POST"},
	} {
		r := e.do(c.method, c.path, nil)
		if r.status != c.status || r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want %d %q", c.method, c.path, r.status, r.header.Get("Allow"), c.status, c.allow)
			continue
		}
		r.errCode(t)
	}
}

func TestPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	if _, err := e.c.Record(context.Background(), scopeA, "<script>alert(1)</script>", []imprint.Message{{Role: imprint.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	r := e.do("GET", "/"+q(scopeA), nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", r.status, r.header.Get("Content-Type"))
	}
	body := string(r.body)
	if strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("session id not escaped:\n%s", body)
	}
	if !strings.Contains(body, `href="/v1/status?agent=coder&amp;tenant=acme&amp;user=ana"`) {
		t.Errorf("status link broken:\n%s", body)
	}
	if !strings.Contains(body, "1 pending message(s)") {
		t.Fatalf("page lacks the pending count:\n%s", body)
	}
}

func TestClientUnreachable(t *testing.T) {
	t.Parallel()
	c := &Client{BaseURL: "http://127.0.0.1:1"}
	if err := c.Health(context.Background()); !errors.Is(err, imprint.ErrUnavailable) {
		t.Fatalf("unreachable server: %v, want ErrUnavailable", err)
	}
	err := replyError(413, []byte("<html>too big</html>"))
	if !errors.Is(err, imprint.ErrTooLarge) {
		t.Fatalf("413 without a JSON body: %v", err)
	}
	err = replyError(400, []byte(`{"error":{"code":"invalid","message":"messages[0].role: required"}}`))
	if !errors.Is(err, imprint.ErrInvalid) || err.Error() != "messages[0].role: required" {
		t.Fatalf("invalid: %v", err)
	}
	if errors.Is(replyError(500, []byte(`{"error":{"code":"internal","message":"x"}}`)), imprint.ErrInvalid) {
		t.Fatal("internal must not match ErrInvalid")
	}
}

func TestClientErrorKinds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{MaxBodyBytes: 1024})
	ctx := context.Background()
	if _, err := e.c.Search(ctx, imprint.SearchQuery{Scope: scopeA, Text: " "}); !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("empty search: %v, want ErrInvalid", err)
	}
	if _, err := e.c.Record(ctx, scopeA, "s1", []imprint.Message{{Role: imprint.RoleUser, Content: strings.Repeat("x", 2048)}}); !errors.Is(err, imprint.ErrTooLarge) {
		t.Errorf("oversize record: %v, want ErrTooLarge", err)
	}
	if _, err := e.c.Record(ctx, imprint.Scope{Tenant: strings.Repeat("t", 300)}, "s1", []imprint.Message{{Role: imprint.RoleUser, Content: "x"}}); !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("long tenant: %v, want ErrInvalid", err)
	}
	var apiErr *Error
	if _, err := e.c.Episode(ctx, scopeA, "nope"); !errors.Is(err, imprint.ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Status != 404 {
		t.Errorf("missing episode: %v, want a 404 *Error matching ErrNotFound", err)
	}
}
