package imprint

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

func TestValidateID(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"s1", "0191f2a4-7c1e-7d3a-9b2e-1f2a3b4c5d6e", "agent-42 (Lisbon)", "会话-1", "a b",
		strings.Repeat("x", MaxIDBytes), "-Users-me-src-app", "turn_0123456789abcdef01234567",
	} {
		if err := ValidateID("session id", ok); err != nil {
			t.Errorf("ValidateID(%q) = %v, want nil", ok, err)
		}
	}
	for _, tc := range []struct{ name, id, says string }{
		{"empty", "", "required"},
		{"blank", " \u00a0 ", "required"},
		{"NUL", "s\x001", "NUL"},
		{"tab", "s\t1", "control"},
		{"newline", "s\n1", "control"},
		{"DEL", "s\x7f", "control"},
		{"C1 control", "s\u0085", "control"},
		{"257 bytes", strings.Repeat("x", MaxIDBytes+1), "longer than 256 bytes"},
		{"100k characters", strings.Repeat("é", 50_000), "longer than 256 bytes"},
		{"invalid UTF-8", "s\xff1", "UTF-8 (byte 1)"},
		{"lone continuation byte", "\x80", "UTF-8 (byte 0)"},
	} {
		err := ValidateID("session id", tc.id)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "session id") || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: ValidateID = %v, want ErrInvalid naming session id and saying %q", tc.name, err, tc.says)
		}
	}
	// A real U+FFFD is valid UTF-8 and stays accepted.
	if err := ValidateID("id", "a\uFFFDb"); err != nil {
		t.Errorf("U+FFFD: %v", err)
	}
}

func TestValidateText(t *testing.T) {
	t.Parallel()
	if err := ValidateText("content", "héllo \uFFFD\n\t"); err != nil {
		t.Errorf("valid text: %v", err)
	}
	err := ValidateText("messages[0].content", "ok \xc3\x28 after")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "messages[0].content is not valid UTF-8 (byte 3)") {
		t.Errorf("invalid text: %v", err)
	}
}

func TestScopeValidateRejectsBadParts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scope Scope
		field string
	}{
		{Scope{Tenant: "t\x00", User: "u", Agent: "a"}, "scope.tenant"},
		{Scope{Tenant: "t", User: strings.Repeat("u", 300), Agent: "a"}, "scope.user"},
		{Scope{Tenant: "t", User: "u", Agent: "a\nb"}, "scope.agent"},
		{Scope{Tenant: "t", User: "u", Agent: "a", Workspace: "w\xfe"}, "scope.workspace"},
	} {
		if err := tc.scope.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+q: Validate = %v, want ErrInvalid naming %s", tc.scope, err, tc.field)
		}
	}
	if err := (Scope{Tenant: "t", User: "u", Agent: "a", Workspace: "/src/app"}).Validate(); err != nil {
		t.Errorf("workspace path: %v", err)
	}
}

func TestTimeOutsideYears(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`9223372036854775807`, `-9223372036854775808`, `"9223372036854775807"`, `-1`, `1e300`, `"NaN"`, `"Inf"`,
		`253402300800000`,                                                       // 10000-01-01
		`"1969-12-31T23:59:59Z"`, `"0500-01-01"`, `"9999-12-31T23:00:00-02:00"`, // year 10000 in UTC
	} {
		var got Time
		err := json.Unmarshal([]byte(in), &got)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "1970-9999") {
			t.Errorf("%s: got %v, error %v, want ErrInvalid naming the years", in, got, err)
		}
	}
	for in, want := range map[string]time.Time{
		`0`:                          time.Unix(0, 0),
		`"1970-01-01T00:00:00Z"`:     time.Unix(0, 0),
		`253402300799999`:            time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC),
		`"9999-12-31T23:59:59.999Z"`: time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC),
	} {
		var got Time
		if err := json.Unmarshal([]byte(in), &got); err != nil || !got.Equal(want) {
			t.Errorf("%s: got %v, %v, want %v", in, got, err, want)
		}
	}
	if _, err := ParseTime("10000-01-01T00:00:00Z"); err == nil {
		t.Error("ParseTime of year 10000: no error")
	}
	if got := FromEpochMillis(9223372036854775807); got.Year() != MaxTimeYear {
		t.Errorf("FromEpochMillis of MaxInt64 = %v, want clamped to year %d", got, MaxTimeYear)
	}
}

// FuzzValidateID checks that an accepted id is what the rules say.
func FuzzValidateID(f *testing.F) {
	for _, s := range []string{"s1", "", "a\x00b", strings.Repeat("x", 257), "\xff", "会话", "a\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := ValidateID("id", id)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if len(id) > MaxIDBytes || !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) || strings.TrimSpace(id) == "" {
			t.Fatalf("ValidateID accepted %q", id)
		}
	})
}

// FuzzParseTime checks that every time read from input lies within the
// accepted years, however it was written.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-05-01T10:00:00Z", "1777629600123", "9223372036854775807", "-1", "NaN", "0x1p60",
		"1969-12-31", "9999-12-31T23:59:59-23:59", "2026-05-01 10:00", "1e15"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, read := range []func() (Time, error){
			func() (Time, error) { return ParseTime(s) },
			func() (Time, error) {
				var v Time
				err := v.UnmarshalJSON([]byte(s))
				return v, err
			},
		} {
			v, err := read()
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("%q: error %v is not ErrInvalid", s, err)
				}
				continue
			}
			if !v.IsZero() && (v.UTC().Year() < MinTimeYear || v.UTC().Year() > MaxTimeYear) {
				t.Fatalf("%q read as %v", s, v)
			}
		}
	})
}
