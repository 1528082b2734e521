package redact

import (
	"slices"
	"strings"
	"testing"
)

// checkUpdate runs the rules over s as pass does and fails when the
// anchors moved past a rule's markers differ from a full scan of its
// output.
func checkUpdate(t testing.TB, s string) {
	t.Helper()
	h := scan(s)
	for i := range rules {
		if !h.any(rules[i].ids) {
			continue
		}
		out, edits := rules[i].replace(s, h)
		if len(edits) == 0 {
			continue
		}
		got := h.update(out, edits, len(markerPrefix)+len(rules[i].kind)+1)
		want := scan(out)
		for id := range needles {
			if !slices.Equal(got.pos[id], want.pos[id]) {
				t.Fatalf("after %s, anchor %q%v at %v, a scan finds %v in:\n%q", rules[i].kind, needles[id].text, needles[id].shape, got.pos[id], want.pos[id], out)
			}
		}
		s, h = out, want
	}
}

func TestHitsUpdateMatchesRescan(t *testing.T) {
	t.Parallel()
	var all []string
	for _, tc := range secretCases() {
		checkUpdate(t, tc.text)
		all = append(all, tc.text)
	}
	checkUpdate(t, strings.Join(all, "\n"))
	checkUpdate(t, strings.Join(all, ""))
	checkUpdate(t, strings.Join(all, " key token sk-"))
}
