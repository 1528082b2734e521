package imprint

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf16"
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
	} {
		if err := tc.scope.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+q: Validate = %v, want ErrInvalid naming %s", tc.scope, err, tc.field)
		}
	}
	if err := ValidateWorkspace("workspace", "/src/app"); err != nil {
		t.Errorf("workspace path: %v", err)
	}
	if err := ValidateWorkspace("workspace", ""); err != nil {
		t.Errorf("no workspace: %v", err)
	}
	if err := ValidateWorkspace("message workspace", "w\xfe"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "message workspace") {
		t.Errorf("workspace w\\xfe: Validate = %v, want ErrInvalid naming the field", err)
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

func TestValidateJSON(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		`{"content": "caf\u00e9 \ud83d\ude00 \uD83D\uDE00 \\ud800 \"\\\" ok"}`,
		`{"a": "\ufffd", "b": "` + "\uFFFD" + `"}`,
		`["\\\\ud800"]`,
	} {
		if err := ValidateJSON("body", []byte(ok)); err != nil {
			t.Errorf("ValidateJSON(%s) = %v", ok, err)
		}
	}
	for _, tc := range []struct{ in, says string }{
		{"{\"content\": \"ok \xff\"}", "not valid UTF-8 (byte 16)"},
		{`{"content": "x\ud800"}`, `lone UTF-16 surrogate escape \ud800 (byte 14)`},
		{`{"content": "x\udc00\ud800"}`, `\udc00 (byte 14)`},
		{`{"content": "\ud83d\u0041"}`, `\ud83d (byte 13)`},
		{`{"content": "\ud83d"}`, `\ud83d (byte 13)`},
		{`{"k\ud800": 1}`, `\ud800 (byte 3)`},
	} {
		err := ValidateJSON("request body", []byte(tc.in))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "request body") || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("ValidateJSON(%s) = %v, want ErrInvalid saying %q", tc.in, err, tc.says)
		}
	}
}

// strictString decodes a JSON string literal, reporting false for any text
// encoding/json would have to replace by U+FFFD: invalid UTF-8 or an
// unpaired surrogate escape. It is written independently of ValidateJSON.
func strictString(lit []byte) (string, bool) {
	var units []uint16
	var out []rune
	flush := func() bool {
		for len(units) > 0 {
			u := rune(units[0])
			if !utf16.IsSurrogate(u) {
				out = append(out, u)
				units = units[1:]
				continue
			}
			if len(units) < 2 {
				return false
			}
			r := utf16.DecodeRune(u, rune(units[1]))
			if r == unicode.ReplacementChar {
				return false
			}
			out = append(out, r)
			units = units[2:]
		}
		return true
	}
	s := string(lit[1 : len(lit)-1])
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			if !flush() {
				return "", false
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			out = append(out, r)
			i += size
			continue
		}
		if s[i+1] == 'u' {
			var u uint16
			for _, c := range s[i+2 : i+6] {
				u = u<<4 | uint16(strings.IndexRune("0123456789abcdef", unicode.ToLower(c)))
			}
			units = append(units, u)
			i += 6
			continue
		}
		if !flush() {
			return "", false
		}
		out = append(out, map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[s[i+1]])
		i += 2
	}
	if !flush() {
		return "", false
	}
	return string(out), true
}

// FuzzValidateJSON checks ValidateJSON against a strict decoder of JSON
// strings: a string literal passes exactly when it decodes without a
// replacement, and then encoding/json reads the same text.
func FuzzValidateJSON(f *testing.F) {
	for _, s := range []string{`"ok"`, `"\ud800"`, `"\ud83d\ude00"`, `"\\ud800"`, "\"\xff\"", `"\udc00\ud800"`, `{"a":"\ud800"}`, `"\u00e9\"\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := ValidateJSON("body", data)
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v is not ErrInvalid", err)
		}
		lit := bytes.Trim(data, " \t\r\n")
		if len(lit) < 2 || lit[0] != '"' || !json.Valid(data) {
			return
		}
		want, strict := strictString(lit)
		if strict != (err == nil) {
			t.Fatalf("%q: ValidateJSON = %v, strict decoding ok = %v", data, err, strict)
		}
		var got string
		if e := json.Unmarshal(data, &got); e != nil || (strict && got != want) {
			t.Fatalf("%q: encoding/json read %q (%v), strict %q", data, got, e, want)
		}
	})
}
