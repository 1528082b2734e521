package imprint

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestTimeJSON(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 5, 1, 10, 0, 0, 123e6, time.UTC)
	for _, in := range []string{
		`"2026-05-01T10:00:00.123Z"`,
		`"2026-05-01T12:00:00.123+02:00"`,
		`"2026-05-01T10:00:00.123"`, // no zone: UTC
		`1777629600123`,             // epoch milliseconds
		`"1777629600123"`,
	} {
		var got Time
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if !got.Equal(want) {
			t.Errorf("%s: got %v, want %v", in, got, want)
		}
		out, _ := json.Marshal(got)
		if string(out) != `"2026-05-01T10:00:00.123Z"` {
			t.Errorf("%s: marshalled as %s, want RFC 3339 UTC with milliseconds", in, out)
		}
	}
	var zero Time
	if b, _ := json.Marshal(zero); string(b) != "null" {
		t.Errorf("zero time marshals as %s, want null", b)
	}
	for _, bad := range []string{`"yesterday"`, `true`, `{}`} {
		var got Time
		if err := json.Unmarshal([]byte(bad), &got); err == nil || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", bad, err)
		}
	}
}

func TestNewIDIsOrderedAndUnique(t *testing.T) {
	t.Parallel()
	ids := make([]string, 5000)
	seen := map[string]bool{}
	for i := range ids {
		ids[i] = NewID()
		if seen[ids[i]] {
			t.Fatalf("duplicate id %s", ids[i])
		}
		seen[ids[i]] = true
		if len(ids[i]) != 36 || ids[i][14] != '7' {
			t.Fatalf("id %s is not a canonical UUIDv7", ids[i])
		}
	}
	if !sort.StringsAreSorted(ids) {
		t.Error("ids made in order do not sort in order")
	}
}

func TestScopeValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultScope().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Scope{Tenant: "t", User: " ", Agent: "a"}).Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "scope.user") {
		t.Errorf("blank user: %v", err)
	}
	if got := (Scope{User: "u"}).WithDefaults(); got != (Scope{Tenant: "default", User: "u", Agent: "default"}) {
		t.Errorf("WithDefaults = %+v", got)
	}
}

func TestErrorCode(t *testing.T) {
	t.Parallel()
	cases := map[string]error{
		"invalid":              fmt.Errorf("wrap: %w", Invalidf("x")),
		"not_found":            NotFoundf("x"),
		"conflict":             Conflictf("x"),
		"llm_timeout":          fmt.Errorf("a: %w", ErrLLMTimeout),
		"llm_output_malformed": ErrLLMOutputMalformed,
		"internal":             errors.New("boom"),
	}
	for want, err := range cases {
		if got := ErrorCode(err); got != want {
			t.Errorf("ErrorCode(%v) = %s, want %s", err, got, want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	if got := EstimateTokens("北京开会"); got != 4 {
		t.Errorf("CJK: %d tokens, want one per character", got)
	}
	if got := EstimateTokens("The agent prefers dark mode."); got < 6 || got > 9 {
		t.Errorf("English: %d tokens", got)
	}
	if EstimateTokens("") != 0 {
		t.Error("empty text has tokens")
	}
}
