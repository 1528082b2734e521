package extract

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

func TestDecodeScenesShapes(t *testing.T) {
	t.Parallel()
	scene := `{"scene_name":"Tea talk","message_ids":["a"],"memories":[{"content":"The user likes tea","type":"persona","priority":60,"source_message_ids":["a"]}]}`
	tests := []struct {
		name, in   string
		wantScenes int
		wantErr    bool
	}{
		{"object with scenes", `{"scenes":[` + scene + `]}`, 1, false},
		{"bare array", `[` + scene + `,` + scene + `]`, 2, false},
		{"single scene object", scene, 1, false},
		{"empty scenes", `{"scenes":[]}`, 0, false},
		{"null scenes", `{"scenes":null}`, 0, false},
		{"object without scenes", `{"result":"nothing"}`, 0, true},
		{"scalar", `"no memories"`, 0, true},
		{"scenes not an array", `{"scenes":"x"}`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeScenes(json.RawMessage(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if len(got) != tt.wantScenes {
				t.Errorf("got %d scenes, want %d", len(got), tt.wantScenes)
			}
		})
	}
}

func TestScenesToCandidates(t *testing.T) {
	t.Parallel()
	in := `{"scenes":[
	  {"scene_name":"  Planning\na trip ","message_ids":["n1","n2"],"memories":[
	    {"content":"The user is vegetarian","type":"Persona","priority":"85","source_message_ids":["n1"]},
	    {"content":"Work item","type":"work_fact","priority":90,"source_message_ids":["n1"]},
	    {"content":"   ","type":"persona","priority":90},
	    {"content":"The user flies to Kyoto","type":"episodic","priority":75.6,
	     "metadata":{"activity_start_time":"2026-04-01 09:00","activity_end_time":"soon"}}
	  ]},
	  {"scene_name":"","memories":[{"content":"Answer in German","type":"instruction","priority":-1,"source_message_ids":"n2"}]},
	  {"scene_name":"Planning a trip","memories":[]}
	]}`
	scenes, err := decodeScenes(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	cands, names, last, warns := scenesToCandidates(scenes, "Earlier scene")
	want := []imprint.Candidate{
		{Content: "The user is vegetarian", Type: imprint.MemoryPersona, Priority: 85, SceneName: "Planning a trip", SourceMessageIDs: []string{"n1"}},
		{Content: "The user flies to Kyoto", Type: imprint.MemoryEpisodic, Priority: 76, SceneName: "Planning a trip",
			SourceMessageIDs: []string{"n1", "n2"}, Metadata: imprint.MemoryMetadata{ActivityStartTime: "2026-04-01T09:00:00.000Z"}},
		{Content: "Answer in German", Type: imprint.MemoryInstruction, Priority: -1, SceneName: "Planning a trip", SourceMessageIDs: []string{"n2"}},
	}
	if diff := cmp.Diff(want, cands); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Planning a trip"}, names); diff != "" {
		t.Errorf("scene names (-want +got):\n%s", diff)
	}
	if last != "Planning a trip" {
		t.Errorf("last scene = %q", last)
	}
	if len(warns) != 1 || warns[0].Code != "unknown_type" || !strings.Contains(warns[0].Message, "work_fact") {
		t.Errorf("warnings = %+v, want one unknown_type for work_fact", warns)
	}

	_, names, last, _ = scenesToCandidates(nil, "Earlier scene")
	if len(names) != 0 || last != "Earlier scene" {
		t.Errorf("no scenes: names %v, last %q; want none and the previous scene", names, last)
	}
}

func TestValidatePriorities(t *testing.T) {
	t.Parallel()
	newMsgs := []imprint.Message{{ID: "n1"}}
	tests := []struct {
		name string
		typ  imprint.MemoryType
		in   int
		want int
		keep bool
	}{
		{"missing persona is the floor", imprint.MemoryPersona, missingPriority, 50, true},
		{"missing episodic is the floor", imprint.MemoryEpisodic, missingPriority, 60, true},
		{"missing instruction is the floor", imprint.MemoryInstruction, missingPriority, 70, true},
		{"above 100 is capped", imprint.MemoryPersona, 250, 100, true},
		{"instruction -1 is kept", imprint.MemoryInstruction, -1, -1, true},
		{"persona -1 is dropped", imprint.MemoryPersona, -1, 0, false},
		{"instruction -5 is dropped", imprint.MemoryInstruction, -5, 0, false},
		{"persona below floor", imprint.MemoryPersona, 49, 0, false},
		{"persona at floor", imprint.MemoryPersona, 50, 50, true},
		{"episodic below floor", imprint.MemoryEpisodic, 59, 0, false},
		{"instruction below floor", imprint.MemoryInstruction, 69, 0, false},
		{"instruction in band", imprint.MemoryInstruction, 95, 95, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _ := validate([]imprint.Candidate{{Content: "x y", Type: tt.typ, Priority: tt.in, SourceMessageIDs: []string{"n1"}}}, newMsgs, nil, 10)
			if (len(got) == 1) != tt.keep {
				t.Fatalf("kept %d memories, want keep=%v", len(got), tt.keep)
			}
			if tt.keep && got[0].Priority != tt.want {
				t.Errorf("priority = %d, want %d", got[0].Priority, tt.want)
			}
		})
	}
}

func TestValidateSourcesCapAndIDs(t *testing.T) {
	t.Parallel()
	newMsgs := []imprint.Message{{ID: "n1"}, {ID: "n2"}}
	cands := []imprint.Candidate{
		{Content: "from new and background", Type: imprint.MemoryPersona, Priority: 60, SourceMessageIDs: []string{"bg1", "n2", "n2"}},
		{Content: "from background only", Type: imprint.MemoryPersona, Priority: 60, SourceMessageIDs: []string{"bg1"}},
		{Content: "invented type", Type: "opinion", Priority: 60, SourceMessageIDs: []string{"n1"}},
		{Content: "no sources named", Type: imprint.MemoryPersona, Priority: 60, SourceMessageIDs: []string{}},
		{Content: "third kept", Type: imprint.MemoryEpisodic, Priority: 70, SourceMessageIDs: []string{"n1"}},
		{Content: "fourth, over the cap", Type: imprint.MemoryEpisodic, Priority: 99, SourceMessageIDs: []string{"n1"}},
	}
	got, warns := validate(cands, newMsgs, []imprint.Message{{ID: "bg1"}}, 3)
	var contents [][]string
	for _, m := range got {
		contents = append(contents, append([]string{m.Content}, m.SourceMessageIDs...))
		if m.ID == "" {
			t.Errorf("memory %q has no id", m.Content)
		}
	}
	want := [][]string{{"from new and background", "n2"}, {"no sources named", "n1", "n2"}, {"third kept", "n1"}}
	if diff := cmp.Diff(want, contents); diff != "" {
		t.Errorf("kept memories (-want +got):\n%s", diff)
	}
	if got[0].ID == got[1].ID || got[1].ID == got[2].ID {
		t.Error("memory ids are not unique")
	}
	codes := map[string]int{}
	for _, w := range warns {
		codes[w.Code]++
	}
	if diff := cmp.Diff(map[string]int{"source_not_new": 1, "unknown_type": 1, "memories_capped": 1}, codes); diff != "" {
		t.Errorf("warning codes (-want +got):\n%s", diff)
	}
}

// Absurd priorities from the model: numbers out of every range, numeric
// strings, fractions near -1, non-numbers.
func TestPriorityFromReply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, raw string
		want     int
		keep     bool
	}{
		{"persona", `1e400`, 100, true},
		{"persona", `"1e400"`, 100, true},
		{"persona", `1e9`, 100, true},
		{"episodic", `99.6`, 100, true},
		{"persona", `"85"`, 85, true},
		{"persona", `-1e400`, 0, false},
		{"instruction", `-1`, -1, true},
		{"instruction", `-1.0`, -1, true},
		{"instruction", `"-1"`, -1, true},
		{"instruction", `-0.6`, 0, false},
		{"instruction", `-1.4`, 0, false},
		{"persona", `"high"`, 50, true},
		{"episodic", `true`, 60, true},
		{"episodic", `null`, 60, true},
		{"instruction", `[90]`, 70, true},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.raw, func(t *testing.T) {
			t.Parallel()
			raw := `{"scenes":[{"scene_name":"s","memories":[{"content":"c d","type":"` + tt.typ + `","priority":` + tt.raw + `,"source_message_ids":["n1"]}]}]}`
			scenes, err := decodeScenes(json.RawMessage(raw))
			if err != nil {
				t.Fatal(err)
			}
			cands, _, _, _ := scenesToCandidates(scenes, "")
			got, _ := validate(cands, []imprint.Message{{ID: "n1"}}, nil, 10)
			if (len(got) == 1) != tt.keep {
				t.Fatalf("kept %d memories, want keep=%v", len(got), tt.keep)
			}
			if tt.keep && got[0].Priority != tt.want {
				t.Errorf("priority = %d, want %d", got[0].Priority, tt.want)
			}
		})
	}
}

// Text from the model is stored and shown again in later prompts: control
// characters go, and a scene name is one line of bounded length.
func TestModelTextIsCleaned(t *testing.T) {
	t.Parallel()
	longName := strings.Repeat("场景", 300)
	reply := map[string]any{"scenes": []any{map[string]any{
		"scene_name": "Tea\u0000 time\n" + longName,
		"memories": []any{map[string]any{
			"content": "The user\u0000 likes\u0007 tea\u001b[0m.\nAlso coffee.", "type": "persona", "priority": 60,
			"source_message_ids": []string{"n1"},
		}},
	}}}
	b, err := json.Marshal(reply)
	if err != nil {
		t.Fatal(err)
	}
	scenes, err := decodeScenes(b)
	if err != nil {
		t.Fatal(err)
	}
	cands, names, last, _ := scenesToCandidates(scenes, "")
	if len(cands) != 1 || cands[0].Content != "The user likes tea[0m.\nAlso coffee." {
		t.Fatalf("candidates = %+v", cands)
	}
	if n := utf8.RuneCountInString(last); n > maxSceneNameRunes || strings.ContainsAny(last, "\x00\n") ||
		!strings.HasPrefix(last, "Tea time 场景") || len(names) != 1 || names[0] != last || cands[0].SceneName != last {
		t.Errorf("scene name %q (%d runes), names %q", last, n, names)
	}

	r := NewRunner(Deps{}, DefaultConfig())
	d := r.toDecision(rawDecision{Action: json.RawMessage(`"merge"`), MergedContent: json.RawMessage(`"a\u0000b c"`)}, nil)
	if d.mergedContent != "ab c" {
		t.Errorf("merged_content = %q, want control characters removed", d.mergedContent)
	}
}

// Models copy the prompt's "[id]" blocks, join ids into one string or
// mangle them; a memory is only dropped for its sources when it cites
// background messages and no new one.
func TestValidateSourceIDForms(t *testing.T) {
	t.Parallel()
	newMsgs := []imprint.Message{{ID: "n1"}, {ID: "n2"}}
	bg := []imprint.Message{{ID: "b1"}}
	tests := []struct {
		name string
		in   []string
		want []string // nil: dropped
		warn string
	}{
		{"plain", []string{"n2"}, []string{"n2"}, ""},
		{"bracketed as in the prompt", []string{"[n1]", " [n2] "}, []string{"n1", "n2"}, ""},
		{"quoted", []string{`"n2"`, "'n1'"}, []string{"n2", "n1"}, ""},
		{"comma-joined in one string", []string{"n1, n2"}, []string{"n1", "n2"}, ""},
		{"space-joined in one string", []string{"[n2] [n1]"}, []string{"n2", "n1"}, ""},
		{"unknown ids only: all new messages", []string{"msg_7", "m12"}, []string{"n1", "n2"}, "source_unknown"},
		{"background only: dropped", []string{"b1"}, nil, "source_not_new"},
		{"background and unknown: dropped", []string{"[b1]", "zz"}, nil, "source_not_new"},
		{"new and background: the new one", []string{"b1", "n1"}, []string{"n1"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, warns := validate([]imprint.Candidate{{Content: "x y", Type: imprint.MemoryPersona, Priority: 60, SourceMessageIDs: tt.in}}, newMsgs, bg, 10)
			if tt.want == nil {
				if len(got) != 0 {
					t.Errorf("kept %+v, want the memory dropped", got)
				}
			} else if len(got) != 1 {
				t.Fatalf("dropped the memory, want sources %v", tt.want)
			} else if diff := cmp.Diff(tt.want, got[0].SourceMessageIDs); diff != "" {
				t.Errorf("sources (-want +got):\n%s", diff)
			}
			var codes []string
			for _, w := range warns {
				codes = append(codes, w.Code)
			}
			var wantCodes []string
			if tt.warn != "" {
				wantCodes = []string{tt.warn}
			}
			if diff := cmp.Diff(wantCodes, codes); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzDecodeScenes(f *testing.F) {
	f.Add(`{"scenes":[{"scene_name":"a","memories":[{"content":"c","type":"persona","priority":"x"}]}]}`)
	f.Add(`[{"memories":[{"content":1,"type":null,"source_message_ids":[1,null,"a"]}]}]`)
	f.Fuzz(func(t *testing.T, s string) {
		scenes, err := decodeScenes(json.RawMessage(s))
		if err != nil {
			return
		}
		cands, _, _, _ := scenesToCandidates(scenes, "")
		validate(cands, []imprint.Message{{ID: "a"}}, []imprint.Message{{ID: "b"}}, 10)
	})
}
