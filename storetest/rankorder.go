package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// testSearchTextRankOrder checks the order of trace and message keyword
// hits, which every store ranks as SQLite's FTS5 bm25 does over the same
// documents (a trace's user and agent text, reflection and tool names; a
// message's words, at full weight, and dates, at half, its speaker and
// the turns around it): a word said more often ranks higher, a shorter
// record (in tokens, a repeated word counted each time) higher, a phrase
// (a tool name's words in a row) counts only where it occurs, CJK runs by
// how often they occur, and records that score the same in the order they
// were written. Like SearchTextOrder for memories, every order here is
// the one SQLite's store gives.
func testSearchTextRankOrder(t *testing.T, s imprint.Store) {
	ctx := ctxFor(t)
	the := strings.Repeat("the ", 12)
	trace := func(id string, i int, user, agent string, tools ...string) imprint.Trace {
		tr := imprint.Trace{ID: id, StepKey: id, StepIndex: i, UserText: user, AgentText: agent}
		for _, name := range tools {
			tr.ToolCalls = append(tr.ToolCalls, imprint.ToolCall{Name: name})
		}
		return tr
	}
	// Filler records hold none of the query terms: the terms are rare,
	// so their idf is well above FTS5's floor.
	var filler []imprint.Trace
	for i := range 30 {
		id := fmt.Sprintf("filler%02d", i)
		filler = append(filler, trace(id, i, fmt.Sprintf("step %d: checked the weather report for the trip", i), "今天天气很好", "get_weather"))
	}
	must(t, s.SaveCapture(ctx, episode("ep-filler", scopeA), filler))
	must(t, s.SaveCapture(ctx, episode("ep-rank", scopeA), []imprint.Trace{
		trace("padded", 0, "lighthouse "+the, "ok"),
		trace("plain", 1, "lighthouse harbour ferry market bay islands ticket price", "ok"),
		trace("often", 2, "lighthouse lighthouse lighthouse tour, then the lighthouse keeper", "ok"),
		trace("once", 3, "the lighthouse tour", "ok"),
		trace("twin1", 4, "lighthouse at dawn and dusk", "ok"),
		trace("twin2", 5, "lighthouse at dawn and dusk", "ok"),
		trace("tool", 6, "look it up on the map", "found the ferry", "lighthouse_lookup", "lighthouse_lookup"),
		trace("split", 7, "lookup the lighthouse", "lighthouse then lookup", "map"),
		trace("cjk1", 8, "我喜欢北京烤鸭", "北京烤鸭很好吃"),
		trace("cjk2", 9, "北京烤鸭北京烤鸭北京烤鸭", "好"),
		trace("cjk3", 10, "在北京吃了很多很多很多很多很多东西还有烤鸭和北京烤鸭", "好"),
	}))
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// often says it four times; split twice in a short text, tool
		// twice in a longer one; once, the twins and plain once each, in
		// texts ever longer; padded once in 14 tokens of two words.
		{"lighthouse", []string{"often", "split", "once", "tool", "twin1", "twin2", "plain", "padded"}},
		{"lighthouse ferry", []string{"plain", "tool", "often", "split", "once", "twin1", "twin2", "padded"}},
		// The tool name is a phrase: only tool has its words in a row.
		{"lighthouse_lookup", []string{"tool"}},
		{"lookup dawn", []string{"split", "tool", "twin1", "twin2"}},
		// A CJK run of four (trigram index) and of two (word index).
		{"北京烤鸭", []string{"cjk2", "cjk1", "cjk3"}},
		{"烤鸭", []string{"cjk2", "cjk1", "cjk3"}},
	} {
		got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindTrace, Text: tc.query})
		if d := diff(tc.want, got); d != "" {
			t.Errorf("traces, %q (-want +got):\n%s", tc.query, d)
		}
	}
	may8 := imprint.At(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC))
	turn := func(id, speaker, content string, n int) imprint.Message {
		m := msg(id, imprint.RoleUser, content, 0)
		m.Speaker, m.Timestamp = speaker, imprint.At(may8.Add(time.Duration(n)*time.Second))
		return m
	}
	jan := imprint.At(time.Date(2024, 1, 9, 10, 0, 0, 0, time.UTC))
	var fill []imprint.Message
	for i := range 30 {
		m := msg(fmt.Sprintf("f%02d", i), imprint.RoleUser, fmt.Sprintf("Filler message %d about the weather, 今天天气很好", i), 0)
		m.Speaker, m.Timestamp = "Melanie", imprint.At(jan.Add(time.Duration(i)*time.Second))
		fill = append(fill, m)
	}
	appendMsgs(t, s, scopeA, "filler", fill...)
	appendMsgs(t, s, scopeA, "rank",
		turn("r1", "Caroline", "We watched the sunset at the beach, the sunset was red.", 0),
		turn("r2", "Melanie", "Nice.", 1),
		turn("r3", "Caroline", "A sunset.", 2),
		turn("r4", "Melanie", "What a long day it was, and at the end of it we saw a sunset over the water by the old pier.", 3),
		turn("r5", "Caroline", "I will be there in May.", 4),
		turn("r6", "Melanie", "Lovely.", 5),
		turn("r7", "Caroline", "A sunset.", 6),
		turn("r8", "Melanie", "我喜欢北京烤鸭", 7),
		turn("r9", "Caroline", "北京烤鸭北京烤鸭", 8))
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// r4 says it once in a long message and is the reply to r3; r2
		// answers r1 and is answered by r3.
		{"sunset", []string{"r4", "r3", "r2", "r1", "r7", "r8", "r5", "r6"}},
		// Every message is of May (its date, at half weight); r5 says it.
		{"May", []string{"r6", "r5", "r7", "r2", "r3", "r8", "r4", "r9", "r1"}},
		{"sunset May", []string{"r3", "r4", "r2", "r7", "r1", "r8", "r6", "r5", "r9"}},
		// Caroline said r1, r3, r5, r7 and r9.
		{"Caroline sunset", []string{"r3", "r1", "r7", "r4", "r2", "r9", "r5", "r8", "r6"}},
		{"北京烤鸭", []string{"r9", "r8", "r7"}},
		{"烤鸭", []string{"r9", "r8", "r7"}},
	} {
		got := searchText(t, s, imprint.TextQuery{Kind: imprint.KindMessage, Text: tc.query, SessionID: "rank"})
		if d := diff(tc.want, got); d != "" {
			t.Errorf("messages, %q (-want +got):\n%s", tc.query, d)
		}
	}
}
