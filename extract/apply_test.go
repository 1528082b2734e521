package extract

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm/llmtest"
	"github.com/imprint-dev/imprint/shard"
)

// e2eFacts maps what the user says to the memory the fake model extracts.
var e2eFacts = map[string]string{
	"I live in Berlin these days.":                       "The user lives in Berlin.",
	"I'm allergic to peanuts.":                           "The user is allergic to peanuts.",
	"Berlin is my home city, I love Kreuzberg.":          "The user's home city is Berlin, where they love Kreuzberg.",
	"Peanuts give me a bad reaction, I carry an EpiPen.": "The user has a peanut allergy and carries an EpiPen.",
	"Update: I moved to Munich last month.":              "The user moved from Berlin to Munich.",
	"I started learning the violin.":                     "The user is learning the violin.",
}

func topicOf(content string) string {
	switch {
	case strings.Contains(content, "Berlin"), strings.Contains(content, "Munich"):
		return "home"
	case strings.Contains(content, "peanut"):
		return "allergy"
	}
	return content
}

// e2eJudge decides from the request alone: a new memory about the same
// topic as some of its candidates updates them when it reports a move, and
// merges with them otherwise.
func e2eJudge(t *testing.T) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		j := parseJudge(t, r.User)
		content := map[string]string{}
		for _, c := range j.Candidates {
			content[c.ID] = c.Content
		}
		var ds []map[string]any
		for _, m := range j.NewMemories {
			var targets []string
			for _, id := range m.CandidateIDs {
				if topicOf(content[id]) == topicOf(m.Content) {
					targets = append(targets, id)
				}
			}
			d := map[string]any{"record_id": m.ID, "action": "store", "target_ids": []string{}}
			switch {
			case len(targets) == 0:
			case strings.Contains(m.Content, "moved"):
				d = map[string]any{"record_id": m.ID, "action": "update", "target_ids": targets,
					"merged_timestamps": []string{"1999-01-01T00:00:00Z"}}
			default:
				merged := content[targets[0]] + " " + m.Content
				d = map[string]any{"record_id": m.ID, "action": "merge", "target_ids": targets,
					"merged_content": merged, "merged_priority": 85}
			}
			ds = append(ds, d)
		}
		return llmtest.JSON(map[string]any{"decisions": ds})
	}
}

func e2eExtractor(t *testing.T) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		p := parsePrompt(t, r.User)
		s := scene{Name: "Getting to know the user", IDs: p.newIDs()}
		for _, m := range p.New {
			if c, ok := e2eFacts[m.Content]; ok {
				s.Memories = append(s.Memories, mem{Content: c, Type: "persona", Priority: 70, Sources: []string{m.ID}})
			}
		}
		return scenesReply(s)
	}
}

func TestFactAcrossSessionsIsCorrectedAndReplayable(t *testing.T) {
	t.Parallel()
	for _, vectors := range []bool{false, true} {
		name := "keyword recall"
		var opts []envOpt
		if vectors {
			name = "vector recall"
			opts = append(opts, withEmbedder())
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := smallConfig(10, 5)
			cfg.RecallMinScore = 0.05
			e := newTestEnv(t, cfg, opts...)
			e.srv.Handle(OpExtract, e2eExtractor(t))
			e.srv.Handle(OpDedup, e2eJudge(t))

			days := []time.Time{e.baseDay, e.baseDay.AddDate(0, 0, 1), e.baseDay.AddDate(0, 0, 9)}
			sessions := [][]string{
				{"I live in Berlin these days.", "assistant: Nice city!", "I'm allergic to peanuts."},
				{"Berlin is my home city, I love Kreuzberg.", "Peanuts give me a bad reaction, I carry an EpiPen."},
				{"Update: I moved to Munich last month.", "I started learning the violin."},
			}
			var all [][]Result
			for i, msgs := range sessions {
				session := []string{"monday", "tuesday", "next-week"}[i]
				e.record(session, days[i], msgs...)
				day := days[i].Add(time.Hour)
				e.runner.now = func() time.Time { return day }
				res, err := e.extractAll(session)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, res)
			}
			if got := []Decisions{all[0][0].Decisions, all[1][0].Decisions, all[2][0].Decisions}; !cmp.Equal(got,
				[]Decisions{{Store: 2}, {Merge: 2}, {Update: 1, Store: 1}}) {
				t.Errorf("decisions per session = %+v", got)
			}

			vq, tq := e.store.queries()
			// With vectors, only the first session (an empty scope) recalls by keywords.
			if vectors && (len(vq) == 0 || len(tq) != 2) || !vectors && (len(vq) != 0 || len(tq) == 0) {
				t.Errorf("recall used %d vector and %d keyword queries", len(vq), len(tq))
			}

			live := e.live()
			byTopic := map[string]imprint.Memory{}
			for _, m := range live {
				if _, dup := byTopic[topicOf(m.Content)]; dup {
					t.Errorf("two live memories about %q", topicOf(m.Content))
				}
				byTopic[topicOf(m.Content)] = m
			}
			if len(live) != 3 {
				t.Fatalf("%d live memories, want home, allergy and violin: %+v", len(live), live)
			}
			home := byTopic["home"]
			if home.Content != "The user moved from Berlin to Munich." || home.Version != 3 {
				t.Errorf("home memory = %q v%d, want the correction as version 3", home.Content, home.Version)
			}
			if diff := cmp.Diff([]string{"monday-1", "tuesday-1", "next-week-1"}, home.SourceMessageIDs); diff != "" {
				t.Errorf("home sources (-want +got):\n%s", diff)
			}
			wantTimes := []imprint.Time{imprint.At(days[0]), imprint.At(days[1]), imprint.At(days[2])}
			if diff := cmp.Diff(wantTimes, home.Timestamps); diff != "" {
				t.Errorf("home timestamps are not the source messages' times (-want +got):\n%s", diff)
			}
			if !home.CreatedAt.Equal(days[0].Add(time.Hour)) || !home.UpdatedAt.Equal(days[2].Add(time.Hour)) {
				t.Errorf("home created %v updated %v; want the first version's creation and the last update", home.CreatedAt, home.UpdatedAt)
			}
			if home.SessionID != "next-week" {
				t.Errorf("home session = %q", home.SessionID)
			}

			// The supersedes chain: correction → merge → first statement.
			hist, err := e.db.MemoryHistory(e.ctx, e.scope, home.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != 2 || hist[0].Version != 2 || hist[1].Version != 1 ||
				*hist[0].SupersededBy != home.ID || *hist[1].SupersededBy != hist[0].ID ||
				!cmp.Equal(home.Supersedes, []string{hist[0].ID}) || !cmp.Equal(hist[0].Supersedes, []string{hist[1].ID}) {
				t.Errorf("history of the home memory = %+v", hist)
			}
			allergy := byTopic["allergy"]
			if allergy.Version != 2 || allergy.Priority != 85 ||
				allergy.Content != "The user is allergic to peanuts. The user has a peanut allergy and carries an EpiPen." {
				t.Errorf("allergy memory = %+v", allergy)
			}

			// Superseded versions are not found by keyword search.
			hits, err := e.db.SearchText(e.ctx, imprint.TextQuery{Scope: e.scope, Kind: imprint.KindMemory, Text: "Berlin", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var hitIDs []string
			for _, h := range hits {
				hitIDs = append(hitIDs, h.ID)
			}
			if diff := cmp.Diff([]string{home.ID}, hitIDs); diff != "" {
				t.Errorf("search for Berlin (-want +got):\n%s", diff)
			}

			// The shard log holds every change.
			var ops []string
			if err := shard.Read(e.dir, func(line []byte) error {
				var l RecordLine
				if err := json.Unmarshal(line, &l); err != nil {
					return err
				}
				ops = append(ops, l.Op)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			wantOps := []string{"store", "store", "merge", "supersede", "merge", "supersede", "update", "supersede", "store"}
			if diff := cmp.Diff(wantOps, ops); diff != "" {
				t.Errorf("shard ops (-want +got):\n%s", diff)
			}
			files, _ := shard.Files(e.dir)
			if len(files) != 3 {
				t.Errorf("shard files = %v, want one per day of change", files)
			}

			// Replaying the shards into an empty store gives the same memories.
			fresh := openDB(t)
			st, err := ReplayWith(e.ctx, fresh, shard.Dir(e.dir), e.deps.Embedder)
			if err != nil {
				t.Fatal(err)
			}
			if st.Written != 6 || st.Lines != 9 {
				t.Errorf("replay stats = %+v, want 9 lines and 6 memories", st)
			}
			again, err := ReplayWith(e.ctx, fresh, shard.Dir(e.dir), nil)
			if err != nil || again.Written != 0 || again.Existing != 6 {
				t.Errorf("second replay = %+v, %v; want nothing written", again, err)
			}
			ignore := cmpopts.IgnoreFields(imprint.Memory{}, "Vec", "Embedder")
			for _, all := range []bool{false, true} {
				want, err := e.db.ListMemories(e.ctx, e.scope, imprint.MemoryFilter{AllVersions: all})
				if err != nil {
					t.Fatal(err)
				}
				got, err := fresh.ListMemories(e.ctx, e.scope, imprint.MemoryFilter{AllVersions: all})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got, ignore, cmpopts.SortSlices(func(a, b imprint.Memory) bool { return a.ID < b.ID })); diff != "" {
					t.Errorf("replayed memories (all versions %v) differ (-original +replayed):\n%s", all, diff)
				}
			}
		})
	}
}

func TestTwoMemoriesUpdatingOneTargetChainOnTheLatest(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, smallConfig(10, 5))
	old := e.putMemory("The user runs 5 km.", imprint.MemoryPersona)
	e.srv.Script(OpExtract, scenesReply(scene{Name: "Running", Memories: []mem{
		{Content: "The user runs 10 km.", Type: "persona", Priority: 60, Sources: []string{"s1-1"}},
		{Content: "The user runs 10 km on Sundays.", Type: "persona", Priority: 60, Sources: []string{"s1-2"}},
	}}))
	e.srv.Handle(OpDedup, func(r llmtest.Request) llmtest.Reply {
		j := parseJudge(t, r.User)
		var ds []map[string]any
		for i, m := range j.NewMemories {
			// The first updates without content; the second merges without
			// content, which counts as an update.
			ds = append(ds, map[string]any{"record_id": m.ID, "action": []string{"update", "merge"}[i], "target_ids": []string{old.ID}})
		}
		return llmtest.JSON(ds)
	})
	e.record("s1", e.baseDay, "I run 10k now", "on Sundays")
	res, _, err := e.runner.ExtractNext(e.ctx, e.scope, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Decisions != (Decisions{Update: 2}) || len(res.Records) != 2 {
		t.Fatalf("result = %+v", res)
	}
	first, second := res.Records[0], res.Records[1]
	if !cmp.Equal(first.Supersedes, []string{old.ID}) || !cmp.Equal(second.Supersedes, []string{first.ID}) ||
		first.Version != 2 || second.Version != 3 || !second.CreatedAt.Equal(old.CreatedAt.Time) {
		t.Errorf("chain = %+v / %+v", first, second)
	}
	live := e.live()
	if len(live) != 1 || live[0].ID != second.ID || live[0].Content != "The user runs 10 km on Sundays." {
		t.Errorf("live = %+v", live)
	}
	if diff := cmp.Diff([]string{"s1-1", "s1-2"}, live[0].SourceMessageIDs); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	// The merge without merged_content is an update in the shard too, and
	// each replaced version gets its supersede line.
	type line struct{ Op, ID, SupersededBy string }
	var lines []line
	if err := shard.Read(e.dir, func(b []byte) error {
		var l RecordLine
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		by := ""
		if l.Memory.SupersededBy != nil {
			by = *l.Memory.SupersededBy
		}
		lines = append(lines, line{l.Op, l.Memory.ID, by})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantLines := []line{
		{"update", first.ID, ""}, {"supersede", old.ID, first.ID},
		{"update", second.ID, ""}, {"supersede", first.ID, second.ID},
	}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("shard lines (-want +got):\n%s", diff)
	}
}

func TestReplayRejectsForeignLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := shard.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append([]any{map[string]any{"op": "delete", "memory": map[string]any{"id": "x"}}}, func(int) time.Time { return time.Now() }); err != nil {
		t.Fatal(err)
	}
	if _, err := ReplayWith(t.Context(), openDB(t), shard.Dir(dir), nil); err == nil || !strings.Contains(err.Error(), "delete") {
		t.Errorf("Replay of an unknown op = %v, want an error naming it", err)
	}
}
