package postgres

import (
	"context"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestTracesStayInline stores traces with two 384-dimension vectors (3 kB
// of floats) and short texts, by COPY and by INSERT: each row stays in the
// traces table's own pages, none in its TOAST table, and reads back whole.
func TestTracesStayInline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	vec := func(seed int) []float32 {
		v := make([]float32, 384)
		for i := range v {
			v[i] = float32((seed*31+i*17)%1000) / 997
		}
		return v
	}
	var texts []string
	for i := range 48 {
		texts = append(texts, "step "+itoa(i)+" of the booking: "+strings.Repeat("seat change ", i%20))
	}
	for _, noCopy := range []bool{false, true} {
		scope := imprint.Scope{Tenant: "t", User: "u", Agent: "copy"}
		if noCopy {
			scope.Agent = "insert"
		}
		eps, trs := copyTestCaptures(texts, scope)
		for _, ts := range trs {
			for i := range ts {
				ts[i].VecSummary, ts[i].VecAction, ts[i].Embedder = vec(i), vec(i+1), "hash"
			}
		}
		db.noCopy = noCopy
		if err := db.SaveCaptures(ctx, eps, trs); err != nil {
			t.Fatal(err)
		}
	}
	db.noCopy = false
	var rows, toasted int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM traces`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := db.pool.QueryRow(ctx, `SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE oid = 'traces'::regclass`).Scan(&toasted); err != nil {
		t.Fatal(err)
	}
	if rows != 2*len(texts) || toasted != 0 {
		t.Errorf("%d traces, %d bytes in their TOAST table; want %d and none", rows, toasted, 2*len(texts))
	}
	got, err := db.GetTrace(ctx, imprint.Scope{Tenant: "t", User: "u", Agent: "copy"}, "copy-tr5")
	if err != nil {
		t.Fatal(err)
	}
	if want := vec(5); len(got.VecSummary) != len(want) || got.VecSummary[383] != want[383] {
		t.Errorf("trace read back with %d dims, last %v; want %d, %v", len(got.VecSummary), got.VecSummary, len(want), want[383])
	}
}
