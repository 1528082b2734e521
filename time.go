package imprint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TimeLayout is the layout of every time imprint writes: RFC 3339, UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Time is a point in time as it appears in imprint's JSON: written as RFC 3339
// UTC with milliseconds (null when zero); read from an RFC 3339 string, a
// date-time without zone (taken as UTC), or epoch milliseconds.
type Time struct{ time.Time }

// At wraps t as a Time, normalized to UTC and millisecond precision.
func At(t time.Time) Time {
	if t.IsZero() {
		return Time{}
	}
	return Time{t.UTC().Truncate(time.Millisecond)}
}

// Now returns the current time as a Time.
func Now() Time { return At(time.Now()) }

// String formats t with TimeLayout, or "" when zero.
func (t Time) String() string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeLayout)
}

// MarshalJSON writes t as an RFC 3339 UTC string with milliseconds, or null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.String() + `"`), nil
}

// UnmarshalJSON accepts null, an RFC 3339 string, a zone-less date-time
// (UTC), or epoch milliseconds as a number or numeric string.
func (t *Time) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		*t = Time{}
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return Invalidf("time: %v", err)
		}
		p, err := ParseTime(s)
		if err != nil {
			return err
		}
		*t = p
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return Invalidf("time: %q is neither a string nor epoch milliseconds", string(b))
	}
	p, err := EpochMillis(f)
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// Years of the times imprint accepts from input. Outside them a time is
// almost always a unit mistake or an attack (epoch 9223372036854775807 is
// year -292275055 once converted), and it would sort and expire wrongly.
const (
	MinTimeYear = 1970
	MaxTimeYear = 9999
)

// minTime and maxTime bound the accepted times: years MinTimeYear to
// MaxTimeYear, UTC.
var (
	minTime = time.Date(MinTimeYear, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(MaxTimeYear+1, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Millisecond)
)

// CheckTime returns an error of kind ErrInvalid naming what when t is not
// zero and falls outside years MinTimeYear to MaxTimeYear (UTC).
func CheckTime(what string, t time.Time) error {
	if t.IsZero() || (!t.Before(minTime) && !t.After(maxTime)) {
		return nil
	}
	return Invalidf("%s: year %d is outside %d-%d", what, t.UTC().Year(), MinTimeYear, MaxTimeYear)
}

// EpochMillis converts epoch milliseconds to a Time; ErrInvalid when ms is
// not a number or falls outside years MinTimeYear to MaxTimeYear.
func EpochMillis(ms float64) (Time, error) {
	if !(ms >= float64(minTime.UnixMilli()) && ms <= float64(maxTime.UnixMilli())) {
		return Time{}, Invalidf("time: epoch milliseconds %v are outside years %d-%d", ms, MinTimeYear, MaxTimeYear)
	}
	return At(time.UnixMilli(int64(ms))), nil
}

// FromEpochMillis converts epoch milliseconds to a Time, clamped to years
// MinTimeYear to MaxTimeYear (NaN is the zero Time). Input should go
// through EpochMillis, which rejects what this clamps.
func FromEpochMillis(ms float64) Time {
	switch {
	case ms != ms:
		return Time{}
	case ms < float64(minTime.UnixMilli()):
		return At(minTime)
	case ms > float64(maxTime.UnixMilli()):
		return At(maxTime)
	}
	return At(time.UnixMilli(int64(ms)))
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

// ParseTime parses an RFC 3339 time, a zone-less date-time (UTC), a date, or
// epoch milliseconds given as digits. An empty string is the zero Time. A
// time outside years MinTimeYear to MaxTimeYear (UTC) is ErrInvalid.
func ParseTime(s string) (Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Time{}, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return EpochMillis(f)
	}
	for _, l := range timeLayouts {
		if p, err := time.Parse(l, s); err == nil {
			if err := CheckTime(fmt.Sprintf("time %q", s), p); err != nil {
				return Time{}, err
			}
			return At(p), nil
		}
	}
	return Time{}, Invalidf("time %q is not RFC 3339 or epoch milliseconds", s)
}
