package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// largeRows is the matrix size of the recall tests: 100k as in production,
// less under -short or the race detector (still above quantMinRows).
func largeRows() int {
	if testing.Short() || raceEnabled {
		return quantMinRows + 1000
	}
	return 100_000
}

// recallQueries is the number of queries of the recall tests.
func recallQueries() int {
	if testing.Short() || raceEnabled {
		return 30
	}
	return 100
}

// clusteredMatrix returns n unit rows around clusters centres, each row
// the centre plus noise of the given spread, and the centres.
func clusteredMatrix(r *rand.Rand, n, dim, clusters int, spread float64) (*Matrix, [][]float32) {
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = randomUnit(r, dim)
	}
	m := NewMatrix(dim)
	v := make([]float32, dim)
	for range n {
		c := centres[r.IntN(clusters)]
		for j := range v {
			v[j] = c[j] + float32(spread*r.NormFloat64())
		}
		m.Add(Normalize(v))
	}
	return m, centres
}

// checkRecall runs every query through TopK and the exact scan and fails
// unless at least 99% give the same top 10 and the top 1 agrees whenever
// it leads the runner-up by more than 0.02.
func checkRecall(t *testing.T, m *Matrix, queries [][]float32) {
	t.Helper()
	if !Quantized(m) || m.Len() < quantMinRows {
		t.Fatalf("matrix of %d rows would not take the int8 path", m.Len())
	}
	const k = 10
	same := 0
	for qi, q := range queries {
		got := m.TopK(q, k, -2, nil)
		want := ExactTopK(m, q, k, -2, nil)
		if cmp.Equal(want, got) {
			same++
		}
		if len(got) == 0 || len(want) == 0 {
			t.Fatalf("query %d: %d results, exact %d", qi, len(got), len(want))
		}
		if len(want) > 1 && want[0].Score-want[1].Score > 0.02 && got[0] != want[0] {
			t.Errorf("query %d: top 1 = %v, exact %v (margin %.3f)", qi, got[0], want[0], want[0].Score-want[1].Score)
		}
	}
	if same*100 < 99*len(queries) {
		t.Errorf("same top %d in %d of %d queries, want at least 99%%", k, same, len(queries))
	}
}

func TestQuantTopKRecallRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	m := randomMatrix(r, largeRows(), 384)
	var queries [][]float32
	for i := range recallQueries() {
		if i%2 == 0 {
			queries = append(queries, randomUnit(r, 384))
			continue
		}
		// a stored row slightly moved: a clear top 1
		q := append([]float32(nil), m.Row(r.IntN(m.Len()))...)
		for j := range q {
			q[j] += float32(0.02 * r.NormFloat64())
		}
		queries = append(queries, Normalize(q))
	}
	checkRecall(t, m, queries)
}

func TestQuantTopKRecallClustered(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(23, 24))
	m, centres := clusteredMatrix(r, largeRows(), 384, 300, 0.04)
	var queries [][]float32
	for i := range recallQueries() {
		q := append([]float32(nil), centres[r.IntN(len(centres))]...)
		if i%2 == 1 {
			q = append(q[:0], m.Row(r.IntN(m.Len()))...)
		}
		for j := range q {
			q[j] += float32(0.03 * r.NormFloat64())
		}
		queries = append(queries, Normalize(q))
	}
	checkRecall(t, m, queries)
}

// TestQuantTopKSemantics checks that the int8 path keeps TopK's contract
// exactly: keep filters before scoring and is called once per row,
// minScore applies to exact scores, ties go to lower rows, and odd rows
// (zero or non-finite) are scored as the exact scan scores them.
func TestQuantTopKSemantics(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(25, 26))
	n := quantMinRows + 1234
	m, _ := clusteredMatrix(r, n, 48, 40, 0.05)
	for i := range 500 { // exact duplicates: ties
		m.Set(n-1-i, m.Row(i))
	}
	m.Set(77, make([]float32, 48)) // zero row
	inf := make([]float32, 48)
	inf[3] = float32(math.Inf(1))
	m.Set(78, inf)
	nan := make([]float32, 48)
	nan[5] = float32(math.NaN())
	m.Set(79, nan)
	if !Quantized(m) {
		t.Fatal("Set lost the int8 copy")
	}
	var calls atomic.Int64
	keepThird := func(i int) bool { calls.Add(1); return i%3 != 0 }
	tests := []struct {
		name     string
		k        int
		minScore float32
		keep     func(int) bool
	}{
		{"top 1", 1, -2, nil},
		{"top 10", 10, -2, nil},
		{"top 100", 100, -2, nil},
		{"keep filter", 20, -2, keepThird},
		{"keep none", 10, -2, func(int) bool { return false }},
		{"min score", 50, 0.9, nil},
		{"min score and keep", 50, 0.8, keepThird},
		{"min score drops all", 10, 1.01, nil},
		{"negative min score", 10, -0.5, nil},
	}
	queries := [][]float32{m.Row(3), m.Row(10), randomUnit(r, 48), make([]float32, 48), inf}
	for _, tc := range tests {
		for qi, q := range queries {
			name := fmt.Sprintf("%s/query %d", tc.name, qi)
			calls.Store(0)
			got := m.TopK(q, tc.k, tc.minScore, tc.keep)
			if tc.keep != nil && tc.name != "keep none" {
				if c := calls.Load(); c != int64(n) {
					t.Errorf("%s: keep called %d times for %d rows", name, c, n)
				}
			}
			want := naiveTopK(m, q, tc.k, tc.minScore, tc.keep)
			if diff := cmp.Diff(want, got, cmpEmpty, cmp.Comparer(func(a, b float32) bool {
				return a == b || (a != a && b != b)
			})); diff != "" {
				t.Errorf("%s (-exact +TopK):\n%s", name, diff)
			}
			for _, res := range got {
				if tc.keep != nil && !tc.keep(res.Row) {
					t.Errorf("%s: filtered row %d in the results", name, res.Row)
				}
				if res.Score < tc.minScore || res.Score != res.Score {
					t.Errorf("%s: row %d scores %v, below min %v", name, res.Row, res.Score, tc.minScore)
				}
			}
		}
	}
}

// TestQuantFollowsWrites checks that Add and Set keep the int8 copy in
// step, and that a matrix filled through Data directly still answers
// correctly (by the exact scan).
func TestQuantFollowsWrites(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(27, 28))
	n := quantMinRows + 10
	m := randomMatrix(r, n, 32)
	q := randomUnit(r, 32)
	m.Set(12345, q)
	if got := m.TopK(q, 1, -2, nil); len(got) != 1 || got[0].Row != 12345 {
		t.Errorf("after Set, TopK = %v, want row 12345 first", got)
	}
	q2 := randomUnit(r, 32)
	row := m.Add(q2)
	if got := m.TopK(q2, 1, -2, nil); len(got) != 1 || got[0].Row != row {
		t.Errorf("after Add, TopK = %v, want row %d first", got, row)
	}
	direct := &Matrix{Dim: 32, Data: append([]float32(nil), m.Data...)}
	direct.Data = append(direct.Data, q...) // a copy of row 12345, later
	if Quantized(direct) {
		t.Fatal("a directly filled matrix claims an int8 copy")
	}
	want := naiveTopK(direct, q, 3, -2, nil)
	if diff := cmp.Diff(want, direct.TopK(q, 3, -2, nil)); diff != "" {
		t.Errorf("direct Data (-naive +TopK):\n%s", diff)
	}
	var zero Matrix // the reset the SQLite index does
	zero.Dim = 32
	zero.Add(q)
	if got := zero.TopK(q, 1, -2, nil); len(got) != 1 || got[0].Row != 0 {
		t.Errorf("zero Matrix after Add: %v", got)
	}
}

func TestQuantize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    []float32
		want  []int8
		scale float32
	}{
		{[]float32{0.5, -0.25, 0}, []int8{127, -64, 0}, 0.5 / 127},
		{[]float32{0, 0}, []int8{0, 0}, 0},
		{[]float32{-1, 1, 0.004}, []int8{-127, 127, 1}, 1.0 / 127},
	}
	for _, tc := range tests {
		dst := make([]int8, len(tc.in))
		rq := quantize(dst, tc.in)
		if diff := cmp.Diff(tc.want, dst); diff != "" || rq.scale != tc.scale {
			t.Errorf("quantize(%v) = %v scale %v, want %v scale %v", tc.in, dst, rq.scale, tc.want, tc.scale)
		}
	}
	if rq := quantize(make([]int8, 2), []float32{1, float32(math.Inf(-1))}); rq.scale == rq.scale {
		t.Errorf("a non-finite row got scale %v, want NaN", rq.scale)
	}
}

func TestDot8(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(29, 30))
	for _, n := range []int{0, 1, 7, 8, 9, 17, 384} {
		a, b := make([]int8, n), make([]int8, n+3)
		var want int32
		for i := range a {
			a[i], b[i] = int8(r.IntN(255)-127), int8(r.IntN(255)-127)
			want += int32(a[i]) * int32(b[i])
		}
		if got := dot8(a, b); got != want {
			t.Errorf("dot8 of %d = %d, want %d", n, got, want)
		}
	}
}
