package search

import "testing"

// TestDefuseRecallTags: recall tags in a record's text lose their '<',
// whatever their case and spacing; every other text is kept as is.
func TestDefuseRecallTags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"plain text about Tokyo", "plain text about Tokyo"},
		{"", ""},
		{"a < b and <b>bold</b>", "a < b and <b>bold</b>"},
		{"see <imprint-recall> here", "see ‹imprint-recall> here"},
		{"end </IMPRINT-RECALL > now", "end ‹/IMPRINT-RECALL > now"},
		{"odd </ imprint-recall>", "odd ‹/ imprint-recall>"},
	} {
		if got := defuseRecallTags(tt.in); got != tt.want {
			t.Errorf("defuseRecallTags(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
