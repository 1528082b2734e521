package heuristic

import (
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

// heuristicMemo is what a user sees of a heuristic memory.
type heuristicMemo struct {
	Content  string
	Type     imprint.MemoryType
	Priority int
	Start    string
}

func memos(cs []imprint.Candidate) []heuristicMemo {
	var out []heuristicMemo
	for _, c := range cs {
		out = append(out, heuristicMemo{c.Content, c.Type, c.Priority, c.Metadata.ActivityStartTime})
	}
	return out
}

func TestHeuristic(t *testing.T) {
	t.Parallel()
	// Wednesday 6 May 2026, 10:00 UTC.
	ts := imprint.At(time.Date(2026, 5, 6, 10, 0, 0, 0, time.UTC))
	P, E, I := imprint.MemoryPersona, imprint.MemoryEpisodic, imprint.MemoryInstruction
	tests := []struct {
		in   string
		want []heuristicMemo
	}{
		// Preferences and facts about the user.
		{"I prefer dark mode in every editor.", []heuristicMemo{{"User prefers dark mode in every editor.", P, 70, ""}}},
		{"I need to change my return flight to Newark tomorrow.", []heuristicMemo{{"User needs to change their return flight to Newark tomorrow.", E, 70, "2026-05-07"}}},
		{"I actually live in Princeton and am also open to flights into EWR.", []heuristicMemo{{"User actually lives in Princeton and is also open to flights into EWR.", P, 70, ""}}},
		{"I really hate waking up early.", []heuristicMemo{{"User really hates waking up early.", P, 70, ""}}},
		{"I don't like cilantro.", []heuristicMemo{{"User doesn't like cilantro.", P, 70, ""}}},
		{"My name is Alice.", []heuristicMemo{{"User's name is Alice.", P, 80, ""}}},
		{"I'm a software engineer at Stripe.", []heuristicMemo{{"User is a software engineer at Stripe.", P, 70, ""}}},
		{"I work as a nurse in Boston.", []heuristicMemo{{"User works as a nurse in Boston.", P, 70, ""}}},
		{"Oh, I live in Berlin with my partner.", []heuristicMemo{{"User lives in Berlin with their partner.", P, 70, ""}}},
		{"I'm allergic to peanuts.", []heuristicMemo{{"User is allergic to peanuts.", P, 80, ""}}},
		{"My wife is a nurse.", []heuristicMemo{{"User's wife is a nurse.", P, 70, ""}}},
		{"I have two kids.", []heuristicMemo{{"User has two kids.", P, 70, ""}}},
		{"My dream is to open a bakery.", []heuristicMemo{{"User's dream is to open a bakery.", P, 65, ""}}},
		{"Running helps me clear my head.", []heuristicMemo{{"Running helps User clear their head.", P, 60, ""}}},
		{"Lately I've been learning Rust.", []heuristicMemo{{"Lately User has been learning Rust.", P, 60, ""}}},
		// Standing instructions.
		{"From now on, answer in Chinese.", []heuristicMemo{{"Standing instruction from the user: from now on, answer in Chinese.", I, 80, ""}}},
		{"Always use tabs, not spaces.", []heuristicMemo{{"Standing instruction from the user: always use tabs, not spaces.", I, 80, ""}}},
		{"Please never use emojis in commit messages.", []heuristicMemo{{"Standing instruction from the user: please never use emojis in commit messages.", I, 80, ""}}},
		{"Don't ever push to main without asking me.", []heuristicMemo{{"Standing instruction from the user: don't ever push to main without asking the user.", I, 80, ""}}},
		{"I want you to always cite your sources.", []heuristicMemo{{"Standing instruction from the user: the user wants you to always cite your sources.", I, 80, ""}}},
		{"Please remember that my birthday is on March 3.", []heuristicMemo{{"User's birthday is on March 3.", P, 75, ""}}},
		{"Please remember to run the linter before committing.", []heuristicMemo{{"Standing instruction from the user: please remember to run the linter before committing.", I, 80, ""}}},
		// Dated events and plans.
		{"I'm going to Paris next week.", []heuristicMemo{{"User is going to Paris next week.", E, 70, "2026-05-13"}}},
		{"Yesterday I ran my first marathon.", []heuristicMemo{{"Yesterday User ran their first marathon.", E, 70, "2026-05-05"}}},
		{"Last week we moved into a new apartment.", []heuristicMemo{{"Last week User and others moved into a new apartment.", E, 80, "2026-04-29"}}},
		{"Tomorrow I have a job interview at Google.", []heuristicMemo{{"Tomorrow User has a job interview at Google.", E, 70, "2026-05-07"}}},
		{"I'm flying to Tokyo on Friday.", []heuristicMemo{{"User is flying to Tokyo on Friday.", E, 70, "2026-05-08"}}},
		{"I went to a jazz concert last Friday.", []heuristicMemo{{"User went to a jazz concert last Friday.", E, 70, "2026-05-01"}}},
		{"I got a puppy three days ago!", []heuristicMemo{{"User got a puppy three days ago.", E, 70, "2026-05-03"}}},
		{"I just finished my PhD thesis!", []heuristicMemo{{"User just finished their PhD thesis.", E, 75, ""}}},
		{"Lost my job yesterday, so I'm looking for a new one.", []heuristicMemo{{"User lost their job yesterday, so they are looking for a new one.", E, 80, "2026-05-05"}}},
		// Chinese.
		{"我喜欢猫。", []heuristicMemo{{"用户喜欢猫。", P, 70, ""}}},
		{"我叫小明。", []heuristicMemo{{"用户叫小明。", P, 80, ""}}},
		{"我是一名医生。", []heuristicMemo{{"用户是一名医生。", P, 70, ""}}},
		{"我住在上海。", []heuristicMemo{{"用户住在上海。", P, 70, ""}}},
		{"我对花生过敏。", []heuristicMemo{{"用户对花生过敏。", P, 80, ""}}},
		{"以后都用中文回答。", []heuristicMemo{{"用户要求：以后都用中文回答。", I, 80, ""}}},
		{"记住我不吃辣。", []heuristicMemo{{"用户不吃辣。", P, 75, ""}}},
		{"请始终用简体中文回复。", []heuristicMemo{{"用户要求：始终用简体中文回复。", I, 80, ""}}},
		{"不要再给我推荐咖啡了。", []heuristicMemo{{"用户要求：不要再给用户推荐咖啡了。", I, 80, ""}}},
		{"我昨天去了北京。", []heuristicMemo{{"用户昨天去了北京。", E, 70, "2026-05-05"}}},
		{"下周五我要去上海出差。", []heuristicMemo{{"下周五用户要去上海出差。", E, 70, "2026-05-15"}}},
		{"上周末我们去爬山了。", []heuristicMemo{{"上周末用户等人去爬山了。", E, 70, "2026-05-02"}}},
		{"我刚买了一辆车。", []heuristicMemo{{"用户刚买了一辆车。", E, 65, ""}}},
		// Nothing worth keeping.
		{"Hi there!", nil},
		{"Thanks a lot, that was helpful!", nil},
		{"How are you?", nil},
		{"Do you like pizza?", nil},
		{"What's the weather like tomorrow?", nil},
		{"Never mind.", nil},
		{"I love that you remembered!", nil},
		{"I love it!", nil},
		{"I'm a bit tired today.", nil},
		{"That sounds great, I'm glad you enjoyed it.", nil},
		{"I'm going to bed.", nil},
		{"Can you always reply briefly?", nil},
		{"I won't quit, even when it's hard.", nil},
		{"I thought it would help.", nil},
		{"Your support gives me strength.", nil},
		{"你好！", nil},
		{"谢谢你的帮助！", nil},
		{"你喜欢什么电影？", nil},
		{"今天天气怎么样？", nil},
		{"我爱你。", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got := Extract([]imprint.Message{{ID: "m1", Role: imprint.RoleUser, Content: tc.in, Timestamp: ts}})
			if diff := cmp.Diff(tc.want, memos(got)); diff != "" {
				t.Errorf("Extract(%q) (-want +got):\n%s", tc.in, diff)
			}
			for _, c := range got {
				if diff := cmp.Diff([]string{"m1"}, c.SourceMessageIDs); diff != "" {
					t.Errorf("source ids (-want +got):\n%s", diff)
				}
				if c.SceneName == "" || c.Priority < c.Type.PriorityFloor() {
					t.Errorf("candidate %+v: empty scene or priority below the type's floor", c)
				}
			}
		})
	}
}

func TestHeuristicMessages(t *testing.T) {
	t.Parallel()
	ts := imprint.At(time.Date(2026, 5, 6, 10, 0, 0, 0, time.UTC))
	msgs := []imprint.Message{
		{ID: "a1", Role: imprint.RoleAssistant, Content: "I prefer short answers. I live in Paris.", Timestamp: ts},
		{ID: "u1", Role: imprint.RoleUser, Content: "Hi! I live in Oslo. I love skiing. I'm allergic to cats. My name is Kari. I have a dog.", Timestamp: ts},
		{ID: "u2", Role: imprint.RoleUser, Content: "I live in Oslo.", Timestamp: ts},
	}
	got := Extract(msgs)
	want := []heuristicMemo{
		{"User lives in Oslo.", imprint.MemoryPersona, 70, ""},
		{"User loves skiing.", imprint.MemoryPersona, 70, ""},
		{"User is allergic to cats.", imprint.MemoryPersona, 80, ""},
	}
	// Assistant messages are ignored, a message gives at most three
	// memories, and a repeated statement is kept once.
	if diff := cmp.Diff(want, memos(got)); diff != "" {
		t.Errorf("Heuristic (-want +got):\n%s", diff)
	}
	for _, c := range got {
		if diff := cmp.Diff([]string{"u1"}, c.SourceMessageIDs); diff != "" {
			t.Errorf("source ids (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff(got, Extract(msgs)); diff != "" {
		t.Errorf("Heuristic is not deterministic (-first +second):\n%s", diff)
	}
}

func TestRelativeDays(t *testing.T) {
	t.Parallel()
	wed := time.Date(2026, 5, 6, 23, 30, 0, 0, time.UTC)
	sun := time.Date(2026, 5, 10, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		expr   string
		ts     time.Time
		future bool
		want   string
	}{
		{"yesterday", wed, false, "2026-05-05"},
		{"the day before yesterday", wed, false, "2026-05-04"},
		{"tomorrow", wed, true, "2026-05-07"},
		{"two days ago", wed, false, "2026-05-04"},
		{"2 weeks ago", wed, false, "2026-04-22"},
		{"in three days", wed, true, "2026-05-09"},
		{"last friday", wed, false, "2026-05-01"},
		{"on friday", wed, true, "2026-05-08"},
		{"on friday", wed, false, "2026-05-01"},
		{"next monday", wed, true, "2026-05-11"},
		{"last weekend", wed, false, "2026-05-02"},
		{"last weekend", sun, false, "2026-05-02"},
		{"this weekend", wed, true, "2026-05-09"},
		{"last month", wed, false, ""},
	}
	for _, tc := range tests {
		got, ok := keyword.RelativeDay(tc.expr, tc.ts, tc.future)
		s := ""
		if ok {
			s = got.Format(time.DateOnly)
		}
		if s != tc.want {
			t.Errorf("keyword.RelativeDay(%q, %s, %v) = %q, want %q", tc.expr, tc.ts.Weekday(), tc.future, s, tc.want)
		}
	}
	zh := []struct{ expr, want string }{
		{"昨天", "2026-05-05"}, {"前天", "2026-05-04"}, {"明天", "2026-05-07"}, {"三天前", "2026-05-03"},
		{"上周五", "2026-05-01"}, {"下周一", "2026-05-11"}, {"周五", "2026-05-08"}, {"上周末", "2026-05-02"}, {"最近", ""},
	}
	for _, tc := range zh {
		got, ok := relativeDayZH(tc.expr, wed)
		s := ""
		if ok {
			s = got.Format(time.DateOnly)
		}
		if s != tc.want {
			t.Errorf("relativeDayZH(%q) = %q, want %q", tc.expr, s, tc.want)
		}
	}
}

// goldItem is one labelled LoCoMo message of testdata/gold.
type goldItem struct {
	SampleID string `json:"sample_id"`
	DiaID    string `json:"dia_id"`
	Speaker  string `json:"speaker"`
	Text     string `json:"text"`
	Expect   bool   `json:"expect_memory"`
	Type     string `json:"type"`
}

// locomoUsers are LoCoMo's speaker_a of each conversation: the importer
// records them as the user.
var locomoUsers = map[string]string{"conv-26": "Caroline", "conv-30": "Jon"}

// goldScore is how Heuristic does on a labelled set. A message is a
// predicted positive when Heuristic yields at least one memory from it; a
// typed hit also has a memory of the labelled type.
type goldScore struct {
	items, tp, fp, fn, tn, typed int
}

func (s goldScore) precision() float64      { return ratio(s.tp, s.tp+s.fp) }
func (s goldScore) recall() float64         { return ratio(s.tp, s.tp+s.fn) }
func (s goldScore) typedPrecision() float64 { return ratio(s.typed, s.tp+s.fp) }
func (s goldScore) typedRecall() float64    { return ratio(s.typed, s.tp+s.fn) }

func scoreGold(t *testing.T, name string) goldScore {
	t.Helper()
	items := readJSONLines[goldItem](t, filepath.Join("testdata", "gold", name))
	ts := imprint.At(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC))
	s := goldScore{items: len(items)}
	for _, g := range items {
		role := imprint.RoleAssistant
		if locomoUsers[g.SampleID] == g.Speaker {
			role = imprint.RoleUser
		}
		cs := Extract([]imprint.Message{{ID: g.SampleID + ":" + g.DiaID, Role: role, Content: g.Text, Timestamp: ts}})
		switch predicted := len(cs) > 0; {
		case predicted && g.Expect:
			s.tp++
			for _, c := range cs {
				if string(c.Type) == g.Type {
					s.typed++
					break
				}
			}
		case predicted && !g.Expect:
			s.fp++
			t.Logf("%s: false positive %s %s: %q -> %q", name, g.SampleID, g.DiaID, g.Text, cs[0].Content)
		case !predicted && g.Expect:
			s.fn++
			t.Logf("%s: missed %s %s (%s): %q", name, g.SampleID, g.DiaID, g.Type, g.Text)
		default:
			s.tn++
		}
	}
	t.Logf("%s: %d items, tp=%d fp=%d fn=%d tn=%d", name, s.items, s.tp, s.fp, s.fn, s.tn)
	t.Logf("%s: any type:     precision %.3f recall %.3f", name, s.precision(), s.recall())
	t.Logf("%s: correct type: precision %.3f recall %.3f (%d of %d true positives have the labelled type)",
		name, s.typedPrecision(), s.typedRecall(), s.typed, s.tp)
	return s
}

// TestHeuristicGold measures Heuristic on real LoCoMo messages labelled by
// hand (testdata/gold/README.md). The thresholds apply to the gold set; the
// held-out set, labelled later and never used to adjust the patterns, is
// reported so the gold numbers can be read against it.
func TestHeuristicGold(t *testing.T) {
	t.Parallel()
	gold := scoreGold(t, "locomo_gold.jsonl")
	if gold.items < 40 {
		t.Fatalf("gold set has %d items, want at least 40", gold.items)
	}
	if gold.precision() < 0.8 || gold.recall() < 0.5 {
		t.Errorf("gold precision %.3f (want >= 0.8), recall %.3f (want >= 0.5)", gold.precision(), gold.recall())
	}
	scoreGold(t, "locomo_heldout.jsonl")
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// FuzzHeuristic runs both heuristics over any message: they never panic,
// and valid UTF-8 in gives valid UTF-8 out within the bounds on memories.
func FuzzHeuristic(f *testing.F) {
	f.Add("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.")
	f.Add("Ana", "I went to ȺȺȺȺȺȺȺȺ yesterday. Last week İİİİ moved in!")
	f.Add("", "Xſix days ago it rained, and I got a puppy. From now on, answer in Chinese.")
	f.Add("小明", "我昨天去了北京。下周五我要去上海出差。")
	ts := imprint.At(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC))
	f.Fuzz(func(t *testing.T, speaker, content string) {
		msgs := []imprint.Message{{ID: "m1", Role: imprint.RoleUser, Speaker: speaker, Content: content, Timestamp: ts}}
		for _, cs := range [][]imprint.Candidate{Extract(msgs), ExtractBetweenPeople(msgs)} {
			if len(cs) > maxPerMessage {
				t.Errorf("%d memories from one message, want at most %d", len(cs), maxPerMessage)
			}
			for _, c := range cs {
				if utf8.ValidString(speaker) && !utf8.ValidString(c.Content) {
					t.Errorf("content %q is not UTF-8", c.Content)
				}
			}
		}
	})
}

// An episodic memory of something the speaker just did ranks above a dated
// one; a name or "just…" word that only contains the speaker's name or
// "just" ("Diana", "justified") does not count.
func TestHeuristicJustPriority(t *testing.T) {
	t.Parallel()
	ts := imprint.At(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC))
	E := imprint.MemoryEpisodic
	tests := []struct {
		in   string
		want heuristicMemo
	}{
		{"I just finished my thesis yesterday.", heuristicMemo{"Ana just finished their thesis on 7 May 2023.", E, 75, "2023-05-07"}},
		{"I visited Diana just after lunch yesterday.", heuristicMemo{"Ana visited Diana just after lunch on 7 May 2023.", E, 70, "2023-05-07"}},
		{"I justified the expense to my boss yesterday.", heuristicMemo{"Ana justified the expense to their boss on 7 May 2023.", E, 70, "2023-05-07"}},
		{"I visited Diana just after lunch and then I just left.", heuristicMemo{"Ana visited Diana just after lunch and then they just left (said on 8 May 2023).", E, 75, ""}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got := ExtractBetweenPeople([]imprint.Message{{ID: "m1", Role: imprint.RoleUser, Speaker: "Ana", Content: tc.in, Timestamp: ts}})
			if diff := cmp.Diff([]heuristicMemo{tc.want}, memos(got)); diff != "" {
				t.Errorf("ExtractBetweenPeople(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestContainsWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"ana just left", true},
		{"then ana just left", true},
		{"(ana just)", true},
		{"diana just left", false},
		{"ana justified it", false},
		{"_ana just left", false},
		{"diana just left, and ana just came", true},
		{"élana just left", false},
		{"ana just", true},
		{"", false},
	} {
		if got := containsWords(tc.s, "ana just"); got != tc.want {
			t.Errorf("containsWords(%q, \"ana just\") = %v, want %v", tc.s, got, tc.want)
		}
	}
}
