package importer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/testfiles"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

// sharedTestdata returns the path of a file in the repository's testdata
// folder.
func sharedTestdata(t testing.TB, rel string) string { return testfiles.Path(t, rel) }

func readLoCoMoFile(t *testing.T, loc *time.Location) []Transcript {
	t.Helper()
	path := sharedTestdata(t, "locomo/locomo-2conv.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open LoCoMo testdata: %v", err)
	}
	defer f.Close()
	trs, err := ReadLoCoMo(f, path, loc)
	if err != nil {
		t.Fatalf("ReadLoCoMo: %v", err)
	}
	return trs
}

func TestReadLoCoMoRealFile(t *testing.T) {
	t.Parallel()
	trs := readLoCoMoFile(t, nil)

	type summary struct {
		SessionID           string
		Messages, Users     int
		Episodes            int
		First, Last         string
		FirstID, LastID     string
		FirstRole           imprint.Role
		FirstSpeaker        string
		UserName, AsstName  string
		Warnings            int
		EpisodeTurnsTotal   int
		CaptionedMessages   int
		FirstEpisodeStarted string
	}
	var got []summary
	for _, tr := range trs {
		s := summary{
			SessionID: tr.SessionID,
			Messages:  len(tr.Messages),
			Episodes:  len(tr.Episodes),
			Warnings:  len(tr.Warnings),
		}
		if tr.Source != SourceLoCoMo {
			t.Errorf("%s: Source = %q, want %q", tr.SessionID, tr.Source, SourceLoCoMo)
		}
		for _, m := range tr.Messages {
			if m.Role == imprint.RoleUser {
				s.Users++
				s.UserName = m.Speaker
			} else {
				s.AsstName = m.Speaker
			}
			if strings.Contains(m.Content, "[shared photo: ") {
				s.CaptionedMessages++
			}
			if m.SessionID != tr.SessionID {
				t.Errorf("message %s has session %q", m.ID, m.SessionID)
			}
		}
		if n := len(tr.Messages); n > 0 {
			s.First, s.Last = tr.Messages[0].Timestamp.String(), tr.Messages[n-1].Timestamp.String()
			s.FirstID, s.LastID = tr.Messages[0].ID, tr.Messages[n-1].ID
			s.FirstRole, s.FirstSpeaker = tr.Messages[0].Role, tr.Messages[0].Speaker
		}
		for _, ep := range tr.Episodes {
			s.EpisodeTurnsTotal += len(ep.Turns)
		}
		if len(tr.Episodes) > 0 {
			s.FirstEpisodeStarted = tr.Episodes[0].StartedAt.String()
		}
		got = append(got, s)
	}
	want := []summary{
		{
			SessionID: "conv-26", Messages: 419, Users: 211, Episodes: 19,
			First: "2023-05-08T13:56:00.000Z", Last: "2023-10-22T09:55:14.000Z",
			FirstID: "conv-26:D1:1", LastID: "conv-26:D19:15",
			FirstRole: imprint.RoleUser, FirstSpeaker: "Caroline",
			UserName: "Caroline", AsstName: "Melanie",
			EpisodeTurnsTotal: 419, CaptionedMessages: 116,
			FirstEpisodeStarted: "2023-05-08T13:56:00.000Z",
		},
		{
			SessionID: "conv-30", Messages: 369, Users: 185, Episodes: 19,
			First: "2023-01-20T16:04:00.000Z", Last: "2023-07-23T18:46:13.000Z",
			FirstID: "conv-30:D1:1", LastID: "conv-30:D19:14",
			FirstRole: imprint.RoleAssistant, FirstSpeaker: "Gina",
			UserName: "Jon", AsstName: "Gina",
			EpisodeTurnsTotal: 369, CaptionedMessages: 72,
			FirstEpisodeStarted: "2023-01-20T16:04:00.000Z",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcripts (-want +got):\n%s", diff)
	}
}

func TestReadLoCoMoOrderAndIDs(t *testing.T) {
	t.Parallel()
	for _, tr := range readLoCoMoFile(t, nil) {
		ids := map[string]bool{}
		for i, m := range tr.Messages {
			if ids[m.ID] {
				t.Errorf("%s: duplicate message id %s", tr.SessionID, m.ID)
			}
			ids[m.ID] = true
			if !strings.HasPrefix(m.ID, tr.SessionID+":D") {
				t.Errorf("%s: id %q not prefixed with the sample id and dia_id", tr.SessionID, m.ID)
			}
			if i > 0 && !m.Timestamp.After(tr.Messages[i-1].Timestamp.Time) {
				t.Fatalf("%s: message %s (%s) not after %s (%s)", tr.SessionID, m.ID, m.Timestamp, tr.Messages[i-1].ID, tr.Messages[i-1].Timestamp)
			}
			if strings.TrimSpace(m.Content) == "" {
				t.Errorf("%s: message %s is empty", tr.SessionID, m.ID)
			}
		}
		for _, ep := range tr.Episodes {
			if ep.ClosedBy != imprint.ClosedFinalized || ep.Meta.Source != SourceLoCoMo {
				t.Errorf("episode %s: closed_by %q source %q", ep.ID, ep.ClosedBy, ep.Meta.Source)
			}
			for _, turn := range ep.Turns {
				if !ids[turn.ID] || turn.Meta.Speaker == "" {
					t.Errorf("episode %s: turn %q has no matching message or no speaker", ep.ID, turn.ID)
				}
			}
		}
	}
}

func TestReadLoCoMoTimeZone(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("UTC+8", 8*3600)
	trs := readLoCoMoFile(t, loc)
	// 1:56 pm on 8 May 2023 at UTC+8 is 05:56 UTC.
	if got, want := trs[0].Messages[0].Timestamp.String(), "2023-05-08T05:56:00.000Z"; got != want {
		t.Errorf("first timestamp in UTC+8 = %s, want %s", got, want)
	}
}

func TestReadLoCoMoMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		in           string
		wantIDs      []string
		wantTimes    []string
		wantWarnings []string // substrings, in order
	}{
		{
			name: "bad date follows previous session",
			in: `[{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B",
				"session_1_date_time":"9:00 am on 1 March, 2024","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}],
				"session_2_date_time":"yesterday-ish","session_2":[{"speaker":"B","dia_id":"D2:1","text":"hello"},{"speaker":"A","dia_id":"D2:2","text":"bye"}]}}]`,
			wantIDs:      []string{"s:D1:1", "s:D2:1", "s:D2:2"},
			wantTimes:    []string{"2024-03-01T09:00:00.000Z", "2024-03-01T09:00:01.000Z", "2024-03-01T09:00:02.000Z"},
			wantWarnings: []string{"session_2_date_time"},
		},
		{
			name: "first session undated is skipped, sessions ordered by date",
			in: `[{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B",
				"session_1":[{"speaker":"A","dia_id":"D1:1","text":"lost"}],
				"session_3_date_time":"12:05 am on 2 Jan, 2024","session_3":[{"speaker":"A","dia_id":"D3:1","text":"later"}],
				"session_2_date_time":"11:59 PM on 1 January, 2024","session_2":[{"speaker":"A","dia_id":"D2:1","text":"earlier"}]}}]`,
			wantIDs:      []string{"s:D2:1", "s:D3:1"},
			wantTimes:    []string{"2024-01-01T23:59:00.000Z", "2024-01-02T00:05:00.000Z"},
			wantWarnings: []string{"no session_1_date_time", "session_1: skipped"},
		},
		{
			name: "unknown speaker, empty text, bad session, missing dia_id",
			in: `{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B",
				"session_1_date_time":"1:00 pm on 5 June, 2023","session_1":[{"speaker":"C","dia_id":"D1:1","text":"who"},{"speaker":"A","dia_id":"D1:2","text":"  "},{"speaker":"B","text":"ok","blip_caption":"a cat"}],
				"session_2_date_time":"1:00 pm on 6 June, 2023","session_2":"nope"}}`,
			wantIDs:      []string{"s:S1:3"},
			wantTimes:    []string{"2023-06-05T13:00:00.000Z"},
			wantWarnings: []string{"session_2: not a list", "unknown speaker", "empty text"},
		},
		{
			name:         "sample without speakers",
			in:           `[{"sample_id":"x","conversation":{"session_1":[]}}, 5]`,
			wantWarnings: []string{"speaker_a and speaker_b are required", "sample 2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trs, err := ReadLoCoMo(strings.NewReader(tc.in), "in.json", nil)
			if err != nil {
				t.Fatalf("ReadLoCoMo: %v", err)
			}
			var ids, times, warnings []string
			for _, tr := range trs {
				for _, m := range tr.Messages {
					ids = append(ids, m.ID)
					times = append(times, m.Timestamp.String())
				}
				for _, w := range tr.Warnings {
					if w.File != "in.json" {
						t.Errorf("warning file = %q", w.File)
					}
					warnings = append(warnings, w.Message)
				}
			}
			if diff := cmp.Diff(tc.wantIDs, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTimes, times); diff != "" {
				t.Errorf("times (-want +got):\n%s", diff)
			}
			if len(warnings) != len(tc.wantWarnings) {
				t.Fatalf("warnings = %q, want %d matching %q", warnings, len(tc.wantWarnings), tc.wantWarnings)
			}
			for i, w := range tc.wantWarnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], w)
				}
			}
		})
	}
}

func TestReadLoCoMoCaption(t *testing.T) {
	t.Parallel()
	in := `[{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B",
		"session_1_date_time":"1:00 pm on 5 June, 2023","session_1":[{"speaker":"A","dia_id":"D1:1","text":"Look at this!","blip_caption":"a photo of a dog"}]}}]`
	trs, err := ReadLoCoMo(strings.NewReader(in), "in.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := imprint.Message{ID: "s:D1:1", SessionID: "s", Role: imprint.RoleUser, Speaker: "A",
		Content:   "Look at this!\n[shared photo: a photo of a dog]",
		Timestamp: imprint.At(time.Date(2023, 6, 5, 13, 0, 0, 0, time.UTC))}
	if diff := cmp.Diff([]imprint.Message{want}, trs[0].Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestReadLoCoMoNotJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "not json", `"a string"`, `[1,`} {
		_, err := ReadLoCoMo(strings.NewReader(in), "bad.json", nil)
		if !errors.Is(err, imprint.ErrInvalid) {
			t.Errorf("ReadLoCoMo(%q) error = %v, want ErrInvalid", in, err)
		}
	}
}

func TestParseLoCoMoDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "" means an error
	}{
		{"1:56 pm on 8 May, 2023", "2023-05-08T13:56:00Z"},
		{"12:09 am on 13 September, 2023", "2023-09-13T00:09:00Z"},
		{"12:30 pm on 1 Sept, 2023", "2023-09-01T12:30:00Z"},
		{"10:37 AM on 27 june 2023", "2023-06-27T10:37:00Z"},
		{"2023-05-08T13:56:00Z", "2023-05-08T13:56:00Z"},
		{"2023-05-08 13:56", "2023-05-08T13:56:00Z"},
		{"13:56 pm on 8 May, 2023", ""},
		{"1:56 pm on 31 February, 2023", ""},
		{"1:56 pm on 8 Mayo, 2023", ""},
		{"", ""},
	}
	for _, tc := range tests {
		got, err := parseLoCoMoDate(tc.in, nil)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("parseLoCoMoDate(%q) = %v, want an error", tc.in, got)
		case tc.want != "" && err != nil:
			t.Errorf("parseLoCoMoDate(%q) error: %v", tc.in, err)
		case tc.want != "" && got.UTC().Format(time.RFC3339) != tc.want:
			t.Errorf("parseLoCoMoDate(%q) = %s, want %s", tc.in, got.UTC().Format(time.RFC3339), tc.want)
		}
	}
}

func FuzzReadLoCoMo(f *testing.F) {
	f.Add([]byte(`[{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B","session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}]}}]`))
	f.Add([]byte(`{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B","session_1":[{"speaker":"B","text":"x"}]}}`))
	f.Add([]byte(`[{"conversation":{"speaker_a":"A","speaker_b":"A","session_99999999999999999999":[]}}]`))
	f.Add([]byte(`[null, {}, []]`))
	f.Add([]byte(`[{"sample_id":"s\u0041","conversation":{"speaker_a":"A","speaker_b":"B","session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","text":"hi"}]}}, 5]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		trs, err := ReadLoCoMo(bytes.NewReader(data), "fuzz.json", nil)
		// Decoding the file in one pass gives what decoding each sample
		// alone gives.
		alone, aloneErr := readLoCoMo(bytes.NewReader(data), "fuzz.json", nil, false)
		if fmt.Sprint(err) != fmt.Sprint(aloneErr) || !cmp.Equal(trs, alone) {
			t.Fatalf("in one pass %v %v, sample by sample %v %v", trs, err, alone, aloneErr)
		}
		if err != nil {
			if !errors.Is(err, imprint.ErrInvalid) {
				t.Fatalf("error of unexpected kind: %v", err)
			}
			return
		}
		for _, tr := range trs {
			seen := map[string]bool{}
			for _, m := range tr.Messages {
				if m.ID == "" || seen[m.ID] || strings.TrimSpace(m.Content) == "" {
					t.Fatalf("bad message %+v", m)
				}
				seen[m.ID] = true
			}
		}
	})
}

// TestReadLoCoMoOnePass: the shared test data decoded in one pass gives
// what decoding each sample alone gives.
func TestReadLoCoMoOnePass(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(sharedTestFile(t, "locomo/locomo-2conv.json"))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ReadLoCoMo(bytes.NewReader(data), "locomo-2conv.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := readLoCoMo(bytes.NewReader(data), "locomo-2conv.json", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 2 {
		t.Fatalf("%d transcripts, want 2", len(whole))
	}
	if d := cmp.Diff(alone, whole); d != "" {
		t.Errorf("one pass differs from sample by sample (-alone +whole):\n%s", d)
	}
}

func BenchmarkReadLoCoMo(b *testing.B) {
	data, err := os.ReadFile(sharedTestFile(b, "locomo/locomo-2conv.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadLoCoMo(bytes.NewReader(data), "locomo-2conv.json", nil); err != nil {
			b.Fatal(err)
		}
	}
}
