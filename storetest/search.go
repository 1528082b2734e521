package storetest

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// put stores memories with the given contents in scope A, ids in order.
func putAll(t *testing.T, s imprint.Store, ms ...imprint.Memory) {
	t.Helper()
	for _, m := range ms {
		must(t, s.PutMemory(ctxFor(t), m, nil))
	}
}

func searchText(t *testing.T, s imprint.Store, q imprint.TextQuery) []string {
	t.Helper()
	if q.Scope == (imprint.Scope{}) {
		q.Scope = scopeA
	}
	hits, err := s.SearchText(ctxFor(t), q)
	if err != nil {
		t.Fatalf("SearchText(%q): %v", q.Text, err)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("SearchText(%q): hits not best first: %v then %v", q.Text, hits[i-1].Score, hits[i].Score)
		}
	}
	return hitIDs(hits)
}

func testSearchTextEnglish(t *testing.T, s imprint.Store) {
	putAll(t, s,
		memory("coffee", "User drinks black coffee every morning", 0),
		memory("tea", "User prefers green tea in the afternoon", 1),
		memory("flight", "User booked a flight from JFK to Seattle", 2),
		memory("both", "User likes coffee and tea equally", 3),
	)
	for _, tc := range []struct {
		query string
		want  []string // in any order unless ordered
	}{
		{"coffee", []string{"coffee", "both"}},
		{"COFFEE", []string{"coffee", "both"}},
		{"Seattle flight", []string{"flight"}},
		{"tea OR coffee", []string{"coffee", "tea", "both"}},
		{"submarine", []string{}},
	} {
		got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: tc.query})
		if d := diff(sorted(tc.want), sorted(got)); d != "" {
			t.Errorf("SearchText(%q) (-want +got):\n%s", tc.query, d)
		}
	}
	// A hit carries the memory's text, session and provenance.
	hits, err := s.SearchText(ctxFor(t), imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMemory, Text: "Seattle"})
	must(t, err)
	if len(hits) != 1 {
		t.Fatalf("Seattle: %d hits", len(hits))
	}
	h := hits[0]
	if h.Kind != imprint.KindMemory || h.Text != "User booked a flight from JFK to Seattle" || h.SessionID == nil ||
		*h.SessionID != "s1" || h.EpisodeID != nil || len(h.SourceMessageIDs) != 2 || h.Score <= 0 {
		t.Errorf("memory hit = %+v", h)
	}
}

func sorted(xs []string) []string {
	out := append([]string{}, xs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func testSearchTextCJK(t *testing.T, s imprint.Store) {
	putAll(t, s,
		memory("beijing", "用户下个月去北京出差", 0),
		memory("vector", "我们讨论了向量数据库的选型", 1),
		memory("shanghai", "用户住在上海，喜欢喝咖啡", 2),
		memory("mixed", "The team picked a 向量数据库 for recall", 3),
		memory("trad", "使用者偏好中文全文檢索", 4),
	)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"北京", []string{"beijing"}},
		{"向量数据库", []string{"vector", "mixed"}},
		{"数据库", []string{"vector", "mixed"}},
		{"咖啡", []string{"shanghai"}},
		{"全文檢索", []string{"trad"}},
		{"北京 咖啡", []string{"beijing", "shanghai"}},
		{"广州", []string{}},
		{"recall 北京", []string{"mixed", "beijing"}},
	} {
		got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: tc.query})
		if d := diff(sorted(tc.want), sorted(got)); d != "" {
			t.Errorf("SearchText(%q) (-want +got):\n%s", tc.query, d)
		}
	}
}

func testSearchTextFilters(t *testing.T, s imprint.Store) {
	var ms []imprint.Memory
	for i := range 15 {
		m := memory(fmt.Sprintf("m%02d", i), fmt.Sprintf("User mentioned the airport lounge, note %d", i), i)
		if i%2 == 1 {
			m.SessionID = "s2"
		}
		ms = append(ms, m)
	}
	foreign := memory("foreign", "User mentioned the airport lounge", 0)
	foreign.Scope = scopeB
	putAll(t, s, append(ms, foreign)...)

	if got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: "airport"}); len(got) != 10 {
		t.Errorf("default limit: %d hits, want 10", len(got))
	}
	if got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: "airport", Limit: 3}); len(got) != 3 {
		t.Errorf("limit 3: %d hits", len(got))
	}
	got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: "airport", Limit: 100, SessionID: "s2"})
	if len(got) != 7 {
		t.Errorf("session s2: %d hits, want 7", len(got))
	}
	got = searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: "airport", Limit: 100, ExcludeIDs: []string{"m00", "m03"}})
	if len(got) != 13 || contains(got, "m00") || contains(got, "m03") {
		t.Errorf("exclude m00, m03: %v", got)
	}
	if contains(got, "foreign") {
		t.Error("another scope's memory found")
	}
	got = searchText(t, s, imprint.TextQuery{Scope: scopeB, Kind: imprint.KindMemory, Text: "airport lounge"})
	if d := diff([]string{"foreign"}, got); d != "" {
		t.Errorf("scope B (-want +got):\n%s", d)
	}
	_, err := s.SearchText(ctxFor(t), imprint.TextQuery{Scope: scopeA, Kind: "everything", Text: "airport"})
	wantErr(t, "SearchText of an unknown kind", err, imprint.ErrInvalid)
}

func testSearchTextTraces(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	refl := "Always verify the passenger's date of birth before changes."
	tr := []imprint.Trace{
		{ID: "t0", StepKey: "0", UserText: "I need to cancel reservation ABC123", AgentText: "Cancelling now"},
		{ID: "t1", StepKey: "1", StepIndex: 1, UserText: "also baggage", AgentText: "Updated the baggage allowance",
			Reflection: &refl, ToolCalls: []imprint.ToolCall{{Name: "update_reservation_baggages"}}},
	}
	must(t, s.SaveCapture(ctx, episode("ep1", scopeA), tr))
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"cancel", []string{"t0"}},
		{"birth", []string{"t1"}},
		{"update_reservation_baggages", []string{"t1"}},
		{"allowance", []string{"t1"}},
	} {
		got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindTrace, Text: tc.query})
		if d := diff(tc.want, got); d != "" {
			t.Errorf("SearchText traces %q (-want +got):\n%s", tc.query, d)
		}
	}
	hits, err := s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: imprint.KindTrace, Text: "ABC123"})
	must(t, err)
	if len(hits) != 1 || hits[0].EpisodeID == nil || *hits[0].EpisodeID != "ep1" || hits[0].SessionID == nil ||
		*hits[0].SessionID != "s1" || hits[0].SourceMessageIDs != nil || hits[0].Text == "" {
		t.Errorf("trace hit = %+v", hits)
	}
	got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindTrace, Text: "baggage", SessionID: "other"})
	if len(got) != 0 {
		t.Errorf("trace search in another session: %v", got)
	}
}

// testSearchTextOrder checks the order of keyword hits that both stores
// must agree on: of records holding a term once, a short one ranks above a
// long one (BM25's length normalisation), whatever order they were written
// in, and records alike but for their ids tie and go in the order they
// were written.
func testSearchTextOrder(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	long := "User mentioned the lighthouse while talking at length about the harbour, the ferry timetable, " +
		"the fish market, the weather over the bay and the price of a return ticket to the islands"
	putAll(t, s,
		memory("long", long, 0),
		memory("short", "User loves the lighthouse", 1),
		memory("twin1", "User painted a lighthouse at dawn", 2),
		memory("twin2", "User painted a lighthouse at dawn", 3),
	)
	got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: "lighthouse"})
	if d := diff([]string{"short", "twin1", "twin2", "long"}, got); d != "" {
		t.Errorf("memories, lighthouse (-want +got):\n%s", d)
	}
	tr := []imprint.Trace{
		{ID: "tlong", StepKey: "0", UserText: long, AgentText: "Noted all of that about the trip and the harbour town"},
		{ID: "tshort", StepKey: "1", StepIndex: 1, UserText: "lighthouse tour?", AgentText: "Booked"},
	}
	must(t, s.SaveCapture(ctx, episode("ep-order", scopeA), tr))
	got = searchText(t, s, imprint.TextQuery{Kind: imprint.KindTrace, Text: "lighthouse"})
	if d := diff([]string{"tshort", "tlong"}, got); d != "" {
		t.Errorf("traces, lighthouse (-want +got):\n%s", d)
	}
}

func testSearchTextMessages(t *testing.T, s imprint.Store) {
	appendMsgs(t, s, scopeA, "s1",
		msg("m1", imprint.RoleUser, "Hey Mel! How have you been? I went to a LGBTQ support group yesterday.", 0),
		msg("m2", imprint.RoleAssistant, "That sounds empowering, Caroline!", 1))
	appendMsgs(t, s, scopeA, "s2", msg("m3", imprint.RoleUser, "我周末去了北京的博物馆", 0))
	// m2 answers m1: m1's words are its context, which ranks below the
	// words of m1 itself.
	got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMessage, Text: "support group"})
	if d := diff([]string{"m1", "m2"}, got); d != "" {
		t.Errorf("message search (-want +got):\n%s", d)
	}
	got = searchText(t, s, imprint.TextQuery{Kind: imprint.KindMessage, Text: "北京"})
	if d := diff([]string{"m3"}, got); d != "" {
		t.Errorf("message search 北京 (-want +got):\n%s", d)
	}
	// m1 is the message m2 answers: it shares m2's match, below it.
	got = searchText(t, s, imprint.TextQuery{Kind: imprint.KindMessage, Text: "北京 empowering", SessionID: "s1"})
	if d := diff([]string{"m2", "m1"}, got); d != "" {
		t.Errorf("message search in s1 (-want +got):\n%s", d)
	}
	hits, err := s.SearchText(ctxFor(t), imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMessage, Text: "博物馆"})
	must(t, err)
	if len(hits) != 1 || hits[0].SessionID == nil || *hits[0].SessionID != "s2" || hits[0].EpisodeID != nil || hits[0].SourceMessageIDs != nil {
		t.Errorf("message hit = %+v", hits)
	}
}

// testSearchTextMessageContext checks that a message is found by its
// context — who said it, the dates it is about, the turns it answers and
// that answer it — and that a match in the message's own words ranks above
// a match in its context, while hits still carry the message's own text.
func testSearchTextMessageContext(t *testing.T, s imprint.Store) {
	may8 := imprint.At(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC))
	turn := func(id, speaker, content string, n int) imprint.Message {
		m := msg(id, imprint.RoleUser, content, 0)
		m.Speaker, m.Timestamp = speaker, imprint.At(may8.Add(time.Duration(n)*time.Second))
		return m
	}
	appendMsgs(t, s, scopeA, "conv",
		turn("c1", "Caroline", "I went to a support group yesterday and it was so powerful.", 0),
		turn("c2", "Melanie", "Wow, that must have been moving. What did it teach you?", 1))
	// A later append continues the conversation: its first turn answers
	// the last stored one.
	appendMsgs(t, s, scopeA, "conv",
		turn("c3", "Caroline", "It taught me to accept who I am.", 2),
		turn("c4", "Melanie", "Caroline, I painted a lake sunrise last year.", 3),
		turn("c5", "Caroline", "Thanks, Melanie! Lovely painting.", 4))
	// Each case: the hit that must rank first (the message that says the
	// words, or is about the date), then every hit in any order.
	for _, tc := range []struct {
		query, first string
		all          []string
	}{
		// c1 says it; c3 and c5 are Caroline's; c2 answers c1. c4 only
		// addresses her ("Caroline, I painted…"), which is not about her.
		{"Caroline support group", "c1", []string{"c1", "c2", "c3", "c5"}},
		// Melanie painted; Caroline's "Thanks, Melanie!" only addresses her.
		// c3 is answered by c4; c2 is Melanie's.
		{"Melanie painting", "c4", []string{"c2", "c3", "c4", "c5"}},
		// A query naming only a speaker finds that speaker's messages.
		{"Melanie", "", []string{"c2", "c4"}}, // in either order
		// Stop words dropped: "teach"; c3 answers c2, which answers c1.
		{"what did it teach", "c2", []string{"c1", "c2", "c3"}},
		// c1's "yesterday" is 7 May 2023; every turn is of May 2023.
		{"7 May", "c1", []string{"c1", "c2", "c3", "c4", "c5"}},
		// c4's "last year" is 2022.
		{"painted sunrise 2022", "c4", []string{"c3", "c4", "c5"}}, // c4 answers c3, c5 answers c4
	} {
		got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMessage, Text: tc.query, SessionID: "conv"})
		if len(got) == 0 || tc.first != "" && got[0] != tc.first {
			t.Errorf("message search %q = %v, want %s first", tc.query, got, tc.first)
		}
		if d := diff(tc.all, slices.Sorted(slices.Values(got))); d != "" {
			t.Errorf("message search %q (-want +got):\n%s", tc.query, d)
		}
	}
	hits, err := s.SearchText(ctxFor(t), imprint.TextQuery{Scope: scopeA, Kind: imprint.KindMessage, Text: "May 2023 teach", SessionID: "conv"})
	must(t, err)
	if len(hits) < 2 || hits[0].ID != "c2" || hits[0].Text != "Wow, that must have been moving. What did it teach you?" {
		t.Errorf("hits %+v: want c2 first with its own text only", hits)
	}
	// A query made only of stop words still searches them.
	appendMsgs(t, s, scopeA, "short", msg("q1", imprint.RoleUser, "What is it?", 0))
	if got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMessage, Text: "what is it", SessionID: "short"}); len(got) != 1 {
		t.Errorf("stop-word-only query = %v, want q1", got)
	}
}

// HostileQueries are query strings that must never become FTS or SQL
// syntax; every store must answer them without an error.
var HostileQueries = []string{
	``, ` `, `"`, `""`, `"""`, `'`, `''; DROP TABLE memories; --`, `OR`, `AND`, `NOT`, `a OR b`, `coffee OR`,
	`OR coffee`, `NEAR(`, `NEAR(coffee tea, 2)`, `coffee NEAR tea`, `*`, `coff*`, `^coffee`, `-coffee`, `coffee -tea`,
	`:`, `content:coffee`, `{content}: coffee`, `(`, `)`, `(coffee`, `coffee)`, `((()))`, "\x00", "coffee\x00tea",
	`\`, `\"`, `%`, `_`, `%coffee%`, `?`, `$1`, `:name`, `@p`, `+`, `coffee + tea`, `[`, `]`, `{`, `}`, `#`, `;`,
	`北"京`, `"北京"`, `北京*`, `向量-数据库`, "\xff\xfe", "emoji 🙂 coffee", strings100(),
}

func strings100() string {
	b := make([]byte, 0, 400)
	for i := range 100 {
		b = append(b, fmt.Sprintf(`"w%d OR `, i)...)
	}
	return string(b)
}

func testSearchTextHostile(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	putAll(t, s, memory("coffee", `User drinks "black" coffee (no sugar) - always: NEAR the window*`, 0))
	appendMsgs(t, s, scopeA, "s1", msg("m1", imprint.RoleUser, `coffee OR tea? "yes" NEAR(`, 0))
	must(t, s.SaveCapture(ctx, episode("ep1", scopeA), steps(1, "ep1")))
	for _, k := range []imprint.Kind{imprint.KindMemory, imprint.KindTrace, imprint.KindMessage} {
		for _, q := range HostileQueries {
			if _, err := s.SearchText(ctx, imprint.TextQuery{Scope: scopeA, Kind: k, Text: q}); err != nil {
				t.Errorf("SearchText(%s, %q): %v", k, q, err)
			}
		}
	}
	// Operators are matched as words, not obeyed.
	got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: `NEAR(`})
	if d := diff([]string{"coffee"}, got); d != "" {
		t.Errorf("NEAR( as a word (-want +got):\n%s", d)
	}
	got = searchText(t, s, imprint.TextQuery{Kind: imprint.KindMemory, Text: `-coffee`})
	if d := diff([]string{"coffee"}, got); d != "" {
		t.Errorf("-coffee must still find coffee (-want +got):\n%s", d)
	}
	if n, err := s.CountMemories(ctx, scopeA); err != nil || n != 1 {
		t.Errorf("after hostile queries CountMemories = %d, %v", n, err)
	}
}

// unit returns a unit vector in 4 dimensions pointing at angle degrees in
// the plane of the first two axes, with z added on the third.
func unit(angle, z float64) []float32 {
	r := angle * math.Pi / 180
	v := []float64{math.Cos(r), math.Sin(r), z, 0}
	var n float64
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}

func vecMemory(id string, angle float64, minute int) imprint.Memory {
	m := memory(id, "memory "+id, minute)
	m.Vec, m.Embedder = unit(angle, 0), "e/4"
	return m
}

func searchVector(t *testing.T, s imprint.Store, q imprint.VectorQuery) []imprint.Hit {
	t.Helper()
	if q.Scope == (imprint.Scope{}) {
		q.Scope = scopeA
	}
	if q.Embedder == "" {
		q.Embedder = "e/4"
	}
	hits, err := s.SearchVector(ctxFor(t), q)
	if err != nil {
		t.Fatalf("SearchVector: %v", err)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("SearchVector: hits not best first: %v then %v", hits[i-1].Score, hits[i].Score)
		}
	}
	return hits
}

func testSearchVectorOrder(t *testing.T, s imprint.Store) {
	putAll(t, s, vecMemory("a0", 0, 0), vecMemory("a30", 30, 1), vecMemory("a60", 60, 2), vecMemory("a90", 90, 3),
		vecMemory("a180", 180, 4))
	hits := searchVector(t, s, imprint.VectorQuery{Kind: imprint.KindMemory, Vector: unit(10, 0), Limit: 3})
	if d := diff([]string{"a0", "a30", "a60"}, hitIDs(hits)); d != "" {
		t.Errorf("top 3 near 10° (-want +got):\n%s", d)
	}
	if len(hits) > 0 {
		if want := math.Cos(10 * math.Pi / 180); math.Abs(hits[0].Score-want) > 1e-4 {
			t.Errorf("score of a0 = %v, want cosine %v", hits[0].Score, want)
		}
		h := hits[0]
		if h.Kind != imprint.KindMemory || h.Text != "memory a0" || h.SessionID == nil || len(h.SourceMessageIDs) != 2 {
			t.Errorf("vector hit = %+v", h)
		}
	}
	all := searchVector(t, s, imprint.VectorQuery{Kind: imprint.KindMemory, Vector: unit(100, 0)})
	if d := diff([]string{"a90", "a60", "a30", "a180", "a0"}, hitIDs(all)); d != "" {
		t.Errorf("all near 100° (-want +got):\n%s", d)
	}
	// A positive MinScore drops the negative cosine of a0 (and a180 at 0.17).
	pos := searchVector(t, s, imprint.VectorQuery{Kind: imprint.KindMemory, Vector: unit(100, 0), MinScore: 0.2})
	if d := diff([]string{"a90", "a60", "a30"}, hitIDs(pos)); d != "" {
		t.Errorf("near 100° with MinScore 0.2 (-want +got):\n%s", d)
	}
}

func testSearchVectorFilters(t *testing.T, s imprint.Store) {
	b := vecMemory("b0", 0, 0)
	b.Scope = scopeB
	s2 := vecMemory("s2", 5, 0)
	s2.SessionID = "s2"
	other := vecMemory("other-embedder", 0, 0)
	other.Embedder = "f/4"
	putAll(t, s, vecMemory("a0", 0, 0), vecMemory("a20", 20, 1), vecMemory("a80", 80, 2), b, s2, other)
	q := imprint.VectorQuery{Kind: imprint.KindMemory, Vector: unit(0, 0)}
	for _, tc := range []struct {
		name string
		mod  func(q *imprint.VectorQuery)
		want []string
	}{
		{"scope A", func(q *imprint.VectorQuery) {}, []string{"a0", "s2", "a20", "a80"}},
		{"min score", func(q *imprint.VectorQuery) { q.MinScore = 0.9 }, []string{"a0", "s2", "a20"}},
		{"exclude", func(q *imprint.VectorQuery) { q.ExcludeIDs = []string{"a0", "s2"} }, []string{"a20", "a80"}},
		{"session", func(q *imprint.VectorQuery) { q.SessionID = "s2" }, []string{"s2"}},
		{"unknown session", func(q *imprint.VectorQuery) { q.SessionID = "nope" }, []string{}},
		{"limit", func(q *imprint.VectorQuery) { q.Limit = 2 }, []string{"a0", "s2"}},
		{"scope B", func(q *imprint.VectorQuery) { q.Scope = scopeB }, []string{"b0"}},
		{"scope C", func(q *imprint.VectorQuery) { q.Scope = scopeC }, []string{}},
		{"other embedder", func(q *imprint.VectorQuery) { q.Embedder = "f/4" }, []string{"other-embedder"}},
		{"unknown embedder", func(q *imprint.VectorQuery) { q.Embedder = "g/4" }, []string{}},
		{"wrong dimension", func(q *imprint.VectorQuery) { q.Vector = []float32{1, 0} }, []string{}},
	} {
		qq := q
		tc.mod(&qq)
		got := hitIDs(searchVector(t, s, qq))
		if d := diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	_, err := s.SearchVector(ctxFor(t), imprint.VectorQuery{Scope: scopeA, Kind: imprint.KindMemory, Vector: unit(0, 0)})
	wantErr(t, "SearchVector without embedder", err, imprint.ErrInvalid)
}

// testSearchVectorUpdates checks that writes made after a first search
// (which may have built an in-memory index) are seen by the next search.
func testSearchVectorUpdates(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	putAll(t, s, vecMemory("old", 0, 0), vecMemory("side", 45, 1))
	q := imprint.VectorQuery{Kind: imprint.KindMemory, Vector: unit(0, 0)}
	if d := diff([]string{"old", "side"}, hitIDs(searchVector(t, s, q))); d != "" {
		t.Fatalf("before update (-want +got):\n%s", d)
	}
	nw := vecMemory("new", 2, 5)
	nw.Supersedes = []string{"old"}
	must(t, s.PutMemory(ctx, nw, []string{"old"}))
	putAll(t, s, vecMemory("fresh", 10, 6))
	if d := diff([]string{"new", "fresh", "side"}, hitIDs(searchVector(t, s, q))); d != "" {
		t.Errorf("after supersede and insert (-want +got):\n%s", d)
	}
	// Re-putting a memory with a new vector moves it.
	moved := vecMemory("side", 1, 7)
	must(t, s.PutMemory(ctx, moved, nil))
	if d := diff([]string{"side", "new", "fresh"}, hitIDs(searchVector(t, s, q))); d != "" {
		t.Errorf("after moving side (-want +got):\n%s", d)
	}
}

func testSearchVectorTraces(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	tr := []imprint.Trace{
		{ID: "sum", StepKey: "0", UserText: "a", VecSummary: unit(0, 0), VecAction: unit(90, 0), Embedder: "e/4"},
		{ID: "act", StepKey: "1", StepIndex: 1, UserText: "b", VecSummary: unit(180, 0), VecAction: unit(5, 0), Embedder: "e/4"},
		{ID: "far", StepKey: "2", StepIndex: 2, UserText: "c", VecSummary: unit(60, 0), Embedder: "e/4"},
		{ID: "none", StepKey: "3", StepIndex: 3, UserText: "d"},
	}
	must(t, s.SaveCapture(ctx, episode("ep1", scopeA), tr))
	hits := searchVector(t, s, imprint.VectorQuery{Kind: imprint.KindTrace, Vector: unit(0, 0)})
	if d := diff([]string{"sum", "act", "far"}, hitIDs(hits)); d != "" {
		t.Errorf("trace top-k by the better of two vectors (-want +got):\n%s", d)
	}
	if len(hits) > 0 && (hits[0].EpisodeID == nil || *hits[0].EpisodeID != "ep1" || hits[0].SourceMessageIDs != nil) {
		t.Errorf("trace hit = %+v", hits[0])
	}
	hits = searchVector(t, s, imprint.VectorQuery{Kind: imprint.KindTrace, Vector: unit(0, 0), Limit: 1})
	if d := diff([]string{"sum"}, hitIDs(hits)); d != "" {
		t.Errorf("trace limit 1 (-want +got):\n%s", d)
	}
	// Recapturing without step 0 removes it from vector search too.
	must(t, s.SaveCapture(ctx, episode("ep1", scopeA), tr[1:]))
	hits = searchVector(t, s, imprint.VectorQuery{Kind: imprint.KindTrace, Vector: unit(0, 0)})
	if d := diff([]string{"act", "far"}, hitIDs(hits)); d != "" {
		t.Errorf("after recapture (-want +got):\n%s", d)
	}
}

func testSearchVectorMessages(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	m1 := msg("m1", imprint.RoleUser, "near", 0)
	m1.Vec, m1.Embedder = unit(0, 0), "e/4"
	appendMsgs(t, s, scopeA, "s1", m1, msg("m2", imprint.RoleUser, "later", 1))
	hits := searchVector(t, s, imprint.VectorQuery{Kind: imprint.KindMessage, Vector: unit(0, 0)})
	if d := diff([]string{"m1"}, hitIDs(hits)); d != "" {
		t.Errorf("messages before SetMessageVectors (-want +got):\n%s", d)
	}
	must(t, s.SetMessageVectors(ctx, scopeA, "s1", map[string][]float32{"m2": unit(3, 0)}, "e/4"))
	hits = searchVector(t, s, imprint.VectorQuery{Kind: imprint.KindMessage, Vector: unit(0, 0)})
	if d := diff([]string{"m1", "m2"}, hitIDs(hits)); d != "" {
		t.Errorf("messages after SetMessageVectors (-want +got):\n%s", d)
	}
	if len(hits) > 0 && (hits[0].SessionID == nil || *hits[0].SessionID != "s1" || hits[0].Text != "near") {
		t.Errorf("message hit = %+v", hits[0])
	}
}
