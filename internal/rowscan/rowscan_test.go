package rowscan

import (
	"fmt"
	"testing"
)

// values is a row of fixed values.
type values []string

func (v values) Scan(dst ...any) error {
	if len(dst) != len(v) {
		return fmt.Errorf("%d destinations for %d columns", len(dst), len(v))
	}
	for i, d := range dst {
		*d.(*string) = v[i]
	}
	return nil
}

func TestWith(t *testing.T) {
	var head, a, b, tail string
	if err := With(values{"h", "a", "b", "t"}, []any{&head}, []any{&tail}).Scan(&a, &b); err != nil {
		t.Fatal(err)
	}
	if head != "h" || a != "a" || b != "b" || tail != "t" {
		t.Errorf("scanned %q %q %q %q, want h a b t", head, a, b, tail)
	}
	if err := With(values{"a"}, nil, []any{&tail}).Scan(&a); err == nil {
		t.Error("a row with fewer columns than asked scanned without error")
	}
}
