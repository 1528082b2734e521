package extract

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

func seqMsgs(contents ...string) []imprint.Message {
	out := make([]imprint.Message, len(contents))
	for i, c := range contents {
		out[i] = imprint.Message{ID: fmt.Sprintf("m%d", i+1), Seq: int64(i + 1), Role: imprint.RoleUser, Content: c}
	}
	return out
}

func idsOf(ms []imprint.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestSplitWindow(t *testing.T) {
	t.Parallel()
	many := make([]string, 18)
	for i := range many {
		many[i] = fmt.Sprintf("message number %d", i+1)
	}
	tests := []struct {
		name           string
		n, maxNew, bg  int
		wantNew, wantB []string
	}{
		{"fewer than the window", 3, 10, 5, []string{"m1", "m2", "m3"}, []string{}},
		{"exactly the window", 10, 10, 5, idsOf(seqMsgs(many[:10]...)), []string{}},
		{"window plus partial background", 13, 10, 5, idsOf(seqMsgs(many[:13]...)[3:]), []string{"m1", "m2", "m3"}},
		{"window plus full background", 18, 10, 5, idsOf(seqMsgs(many...)[8:]), []string{"m4", "m5", "m6", "m7", "m8"}},
		{"no background wanted", 18, 10, 0, idsOf(seqMsgs(many...)[8:]), []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			newMsgs, bg := SplitWindow(seqMsgs(many[:tt.n]...), tt.maxNew, tt.bg)
			if diff := cmp.Diff(tt.wantNew, idsOf(newMsgs)); diff != "" {
				t.Errorf("new (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantB, idsOf(bg)); diff != "" {
				t.Errorf("background (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanWindowEdges(t *testing.T) {
	t.Parallel()
	const q = "a real sentence"
	tests := []struct {
		name         string
		pending      []string
		maxNew       int
		complete     bool
		wantConsumed []string
		wantRejected []string
		wantNeedMore bool
	}{
		{"rejected inside the window are consumed with it", []string{q, "??", q, "👍", q, q}, 3, true,
			[]string{"m1", "m2", "m3", "m4", "m5"}, []string{"m2", "m4"}, false},
		{"rejected after the Nth qualified wait for the next window", []string{q, q, "!!", q}, 2, true,
			[]string{"m1", "m2"}, nil, false},
		{"rejected after the last qualified go with the last window", []string{q, q, "!!", "?"}, 2, true,
			[]string{"m1", "m2", "m3", "m4"}, []string{"m3", "m4"}, false},
		{"only rejected messages", []string{"?", "…"}, 2, true,
			[]string{"m1", "m2"}, []string{"m1", "m2"}, false},
		{"partial list cannot decide trailing rejected", []string{q, q, "!!"}, 2, false, nil, nil, true},
		{"partial list with a later qualified decides", []string{q, q, "!!", q}, 2, false,
			[]string{"m1", "m2"}, nil, false},
		{"nothing pending", nil, 2, true, []string{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			consumed, rej, needMore := planWindow(seqMsgs(tt.pending...), tt.maxNew, tt.complete)
			if needMore != tt.wantNeedMore {
				t.Fatalf("needMore = %v, want %v", needMore, tt.wantNeedMore)
			}
			if needMore {
				return
			}
			if diff := cmp.Diff(tt.wantConsumed, idsOf(consumed)); diff != "" {
				t.Errorf("consumed (-want +got):\n%s", diff)
			}
			var gotRej []string
			for _, r := range rej {
				gotRej = append(gotRej, r.ID)
			}
			if diff := cmp.Diff(tt.wantRejected, gotRej); diff != "" {
				t.Errorf("rejected (-want +got):\n%s", diff)
			}
		})
	}
}
