package imprint

import (
	"errors"
	"strings"
	"testing"
)

// TestListingChecks: a listing's limit 0 lists everything, a negative
// limit, an unknown memory type or a bad workspace is ErrInvalid naming
// the field, whoever asks (imprint's flags, the HTTP API's query).
func TestListingChecks(t *testing.T) {
	t.Parallel()
	mf := MemoryFilter{Type: MemoryPersona}
	if err := mf.Check(); err != nil || mf.Limit != NoLimit {
		t.Errorf("memory filter with limit 0: %v, limit %d; want no limit", err, mf.Limit)
	}
	tf := TraceFilter{Limit: 7}
	if err := tf.Check(); err != nil || tf.Limit != 7 {
		t.Errorf("trace filter with limit 7: %v, limit %d", err, tf.Limit)
	}
	for _, tt := range []struct {
		name  string
		check func() error
		field string
	}{
		{"memory type", func() error { f := MemoryFilter{Type: "facts"}; return f.Check() }, "type"},
		{"memory limit", func() error { f := MemoryFilter{Limit: -2}; return f.Check() }, "limit"},
		{"trace limit", func() error { f := TraceFilter{Limit: -2}; return f.Check() }, "limit"},
		{"trace workspace", func() error { f := TraceFilter{Workspace: "a\nb"}; return f.Check() }, "workspace"},
		{"search limit", func() error { q := SearchQuery{Limit: -1}; return q.Check() }, "limit"},
		{"search workspace", func() error { q := SearchQuery{Workspace: "a\x00b"}; return q.Check() }, "workspace"},
		{"recall budget", func() error { return RecallQuery{BudgetTokens: -1}.Check() }, "budget_tokens"},
		{"recall workspace", func() error { return RecallQuery{Workspace: "a\nb"}.Check() }, "workspace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.check(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Check() = %v, want ErrInvalid naming %s", err, tt.field)
			}
		})
	}
}

// TestSearchQueryCheckLimit: a search without a limit gets
// DefaultSearchLimit and one above MaxSearchLimit is capped, as the HTTP
// API caps it.
func TestSearchQueryCheckLimit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want int }{{0, DefaultSearchLimit}, {3, 3}, {MaxSearchLimit + 1, MaxSearchLimit}} {
		q := SearchQuery{Limit: tt.in}
		if err := q.Check(); err != nil || q.Limit != tt.want {
			t.Errorf("limit %d: %v, limit %d; want %d", tt.in, err, q.Limit, tt.want)
		}
	}
}
