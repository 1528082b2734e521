package llm_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/llm"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"absent", nil, 0},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"past http date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
		{"milliseconds header wins", map[string]string{"Retry-After": "9", "Retry-After-Ms": "250"}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := llm.ParseRetryAfter(h, now); got != tt.want {
				t.Errorf("ParseRetryAfter(%v) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestHTTPErrorMessage(t *testing.T) {
	t.Parallel()
	e := &llm.HTTPError{Status: 503, Body: ` {"error": "down"} `}
	if got, want := e.Error(), `http 503 Service Unavailable: {"error": "down"}`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&llm.HTTPError{Status: 502}).Error(), "http 502 Bad Gateway"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
