package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestInputHygiene checks requirement 7 of issue 11 on a real server: ids
// with NUL, control characters or more than 256 bytes, times outside years
// 1970-9999 and text that is not UTF-8 (raw, or a lone surrogate escape
// that encoding/json would turn into U+FFFD) are 400 invalid naming the
// field or byte, and nothing is written.
func TestInputHygiene(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	long := strings.Repeat("s", 100_000)
	msgs := func(sid, id, ts, content string) string {
		return `{"session_id":"` + sid + `","messages":[{"id":"` + id + `","role":"user","content":"` + content + `","timestamp":` + ts + `}]}`
	}
	episode := func(sid, turnTS, content string) string {
		return `{"session_id":"` + sid + `","turns":[{"role":"user","content":"` + content + `","ts":` + turnTS + `}]}`
	}
	turns := func(id, ts, content string) string {
		return `{"turns":[{"id":"` + id + `","role":"user","content":"` + content + `","ts":` + ts + `}]}`
	}
	now := `"2026-05-01T10:00:00Z"`
	for _, tc := range []struct {
		name, method, path, body, says string
	}{
		{"message session id with NUL", "POST", "/v1/messages", msgs(`s\u0000`, "m1", now, "hi"), "session_id must not contain control characters (NUL"},
		{"message session id of 100k bytes", "POST", "/v1/messages", msgs(long, "m1", now, "hi"), "session_id is longer than 256 bytes"},
		{"message id with a newline", "POST", "/v1/messages", msgs("s", `m\n1`, now, "hi"), "messages[0].id must not contain control characters"},
		{"message time of MaxInt64", "POST", "/v1/messages", msgs("s", "m1", "9223372036854775807", "hi"), "messages[0].timestamp"},
		{"message time before 1970", "POST", "/v1/messages", msgs("s", "m1", `"1969-12-31T23:59:59Z"`, "hi"), "year 1969 is outside 1970-9999"},
		{"message invalid UTF-8", "POST", "/v1/messages", msgs("s", "m1", now, "caf\xe9"), "request body is not valid UTF-8 (byte 69)"},
		{"message lone surrogate", "POST", "/v1/messages", msgs("s", "m1", now, `\ud83d`), `request body has a lone UTF-16 surrogate escape \ud83d`},
		{"episode session id of 100k bytes", "POST", "/v1/episodes", episode(long, now, "hi"), "session_id is longer than 256 bytes"},
		{"episode time of year 10000", "POST", "/v1/episodes", episode("s", `"10000-01-01T00:00:00Z"`, "hi"), "turns[0].ts"},
		{"episode invalid UTF-8", "POST", "/v1/episodes", episode("s", now, "\xff\xfe"), "request body is not valid UTF-8"},
		{"episode lone low surrogate", "POST", "/v1/episodes", episode("s", now, `x\udc00`), `lone UTF-16 surrogate escape \udc00`},
		{"episode scope part with a control character", "POST", "/v1/episodes", `{"scope":{"tenant":"t","user":"u\u0085","agent":"a"},"session_id":"s","turns":[{"role":"user","content":"hi"}]}`, "scope.user must not contain control characters"},
		{"turns path id with NUL", "POST", "/v1/sessions/s%00x/turns", turns("t1", now, "hi"), "session id must not contain control characters (NUL"},
		{"turns path id of 300 bytes", "POST", "/v1/sessions/" + strings.Repeat("x", 300) + "/turns", turns("t1", now, "hi"), "session id is longer than 256 bytes"},
		{"turns path id not UTF-8", "POST", "/v1/sessions/s%FF/turns", turns("t1", now, "hi"), "session id is not valid UTF-8"},
		{"turn id with a tab", "POST", "/v1/sessions/s/turns", turns(`t\t1`, now, "hi"), "turns[0].id must not contain control characters"},
		{"turn time of MaxInt64", "POST", "/v1/sessions/s/turns", turns("t1", "9223372036854775807", "hi"), "turns[0].ts"},
		{"turn negative epoch", "POST", "/v1/sessions/s/turns", turns("t1", "-1", "hi"), "turns[0].ts"},
		{"turn invalid UTF-8", "POST", "/v1/sessions/s/turns", turns("t1", now, "a\xc3"), "request body is not valid UTF-8"},
		{"turn lone surrogate", "POST", "/v1/sessions/s/turns", turns("t1", now, `\ud800\u0041`), `lone UTF-16 surrogate escape \ud800`},
		{"finalize path id with an escape", "POST", "/v1/sessions/s%1B/finalize", "", "session id must not contain control characters"},
		{"episode path id with NUL", "GET", "/v1/episodes/e%00", "", "episode id must not contain control characters"},
		{"trace path id too long", "GET", "/v1/traces/" + strings.Repeat("t", 257), "", "trace id is longer than 256 bytes"},
		{"memory path id with DEL", "GET", "/v1/memories/m%7F", "", "memory id must not contain control characters"},
		{"traces query id with NUL", "GET", "/v1/traces?session=s%00", "", "session must not contain control characters"},
		{"memories query id too long", "GET", "/v1/memories?session=" + strings.Repeat("s", 257), "", "session is longer than 256 bytes"},
		{"search text not UTF-8", "GET", "/v1/search?q=caf%E9", "", "q is not valid UTF-8"},
		{"recall session with a newline", "GET", "/v1/recall?q=x&session=a%0Ab", "", "session must not contain control characters"},
		{"query scope part with NUL", "GET", "/v1/memories?tenant=t%00", "", "tenant must not contain control characters"},
	} {
		before := e.counts()
		var body any
		if tc.body != "" {
			body = tc.body
		}
		got := e.do(tc.method, tc.path, body)
		if got.status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400: %s", tc.name, got.status, got.body)
			continue
		}
		code, msg := got.errCode(t)
		if code != "invalid" || !strings.Contains(msg, tc.says) {
			t.Errorf("%s: %s %q, want invalid saying %q", tc.name, code, msg, tc.says)
		}
		e.unchanged(before, tc.name)
	}

	// What is valid still goes through: edge years, emoji as a pair, and
	// ids of other alphabets.
	ok := e.do("POST", "/v1/messages", msgs("会话-1", "m1", "253402300799999", `caf\u00e9 \ud83d\ude00`))
	if ok.status != http.StatusOK {
		t.Fatalf("valid message: %d %s", ok.status, ok.body)
	}
	m, err := e.db.GetMessage(t.Context(), imprint.DefaultScope(), "会话-1", "m1")
	if err != nil || m.Content != "café 😀" || m.Timestamp.Year() != 9999 {
		t.Errorf("stored message = %q at %v, %v", m.Content, m.Timestamp, err)
	}
}

// TestRepostedTurnsAddNothing checks that posting the same turns again
// leaves the open episode as it was, and that turn_count is the episode's
// total across appends.
func TestRepostedTurnsAddNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	body := `{"turns":[{"id":"u1","role":"user","content":"Book a flight"},{"role":"tool","content":"{}","id":"c1"},{"id":"a1","role":"assistant","content":"Done"}]}`
	first := e.do("POST", "/v1/sessions/"+url.PathEscape("live 1")+"/turns", body)
	if first.status != http.StatusOK || first.json(t)["turn_count"] != float64(3) {
		t.Fatalf("first post: %d %s", first.status, first.body)
	}
	before := e.counts()
	again := e.do("POST", "/v1/sessions/"+url.PathEscape("live 1")+"/turns", body)
	if again.status != http.StatusOK || again.json(t)["turn_count"] != float64(3) || again.json(t)["episode_id"] != first.json(t)["episode_id"] {
		t.Errorf("repost: %d %s, want the same episode with 3 turns", again.status, again.body)
	}
	e.unchanged(before, "the repost")
	more := e.do("POST", "/v1/sessions/"+url.PathEscape("live 1")+"/turns", `{"turns":[{"id":"u2","role":"user","content":"And a hotel"}]}`)
	if more.status != http.StatusOK || more.json(t)["turn_count"] != float64(4) {
		t.Errorf("next post: %d %s, want turn_count 4", more.status, more.body)
	}
}
