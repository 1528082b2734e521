package imprint

import "testing"

func TestParseKind(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "all", "memory", "trace", "message"} {
		if _, err := ParseKind(s); err != nil {
			t.Errorf("ParseKind(%q): %v", s, err)
		}
	}
	if _, err := ParseKind("facts"); err == nil {
		t.Error("ParseKind(facts) should fail")
	}
}
