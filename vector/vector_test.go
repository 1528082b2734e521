package vector

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	tests := [][]float32{
		nil,
		{0},
		{1, -1, 0.5, -0.25},
		{float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32},
		randomUnit(rand.New(rand.NewPCG(1, 2)), 384),
	}
	for _, v := range tests {
		b := Encode(v)
		if len(b) != 4*len(v) {
			t.Errorf("Encode(%d components) = %d bytes", len(v), len(b))
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if len(got) != len(v) {
			t.Fatalf("Decode gave %d components, want %d", len(got), len(v))
		}
		for i := range v {
			if math.Float32bits(got[i]) != math.Float32bits(v[i]) {
				t.Errorf("component %d = %v, want %v (bit for bit)", i, got[i], v[i])
			}
		}
	}
}

func TestEncodeIsLittleEndian(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0}, Encode([]float32{1, -2})); diff != "" {
		t.Errorf("Encode (-want +got):\n%s", diff)
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	tests := map[string][]byte{
		"one byte":       {1},
		"five bytes":     {0, 0, 0x80, 0x3f, 0},
		"seven bytes":    {0, 0, 0x80, 0x3f, 0, 0, 0},
		"NaN":            Encode([]float32{1, float32(math.NaN())}),
		"+Inf":           Encode([]float32{float32(math.Inf(1))}),
		"-Inf":           Encode([]float32{0, 0, float32(math.Inf(-1))}),
		"quiet NaN bits": {0x01, 0x00, 0xc0, 0x7f},
	}
	for name, b := range tests {
		if v, err := Decode(b); err == nil {
			t.Errorf("%s: Decode = %v, want an error", name, v)
		}
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want []float32
	}{
		{[]float32{3, 4}, []float32{0.6, 0.8}},
		{[]float32{0, 0, 0}, []float32{0, 0, 0}},
		{[]float32{-2}, []float32{-1}},
		{[]float32{}, []float32{}},
		{[]float32{1e-30, 1e-30}, []float32{float32(1 / math.Sqrt2), float32(1 / math.Sqrt2)}},
		{[]float32{1e30, 1e30}, []float32{float32(1 / math.Sqrt2), float32(1 / math.Sqrt2)}},
	}
	for _, tc := range tests {
		in := append([]float32(nil), tc.in...)
		got := Normalize(in)
		if diff := cmp.Diff(tc.want, got, approx, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Normalize(%v) (-want +got):\n%s", tc.in, diff)
		}
		if len(in) > 0 && &got[0] != &in[0] {
			t.Errorf("Normalize(%v) did not work in place", tc.in)
		}
	}
}

var approx = cmp.Comparer(func(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-6 })

func TestDot(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 8, 9, 17, 384} {
		a, b := randomUnit(r, n), randomUnit(r, n)
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		if got := Dot(a, b); math.Abs(float64(got)-want) > 1e-5 {
			t.Errorf("Dot of %d components = %v, want %v", n, got, want)
		}
		if n > 0 {
			if self := Dot(a, a); math.Abs(float64(self)-1) > 1e-5 {
				t.Errorf("Dot(v, v) of a unit vector = %v, want 1", self)
			}
		}
	}
	if got := Dot([]float32{1, 2, 3}, []float32{4, 5}); got != 14 {
		t.Errorf("Dot over the common length = %v, want 14", got)
	}
}

func TestMatrixRows(t *testing.T) {
	t.Parallel()
	m := NewMatrix(2)
	if m.Len() != 0 {
		t.Fatalf("empty Len = %d", m.Len())
	}
	if i := m.Add([]float32{1, 2}); i != 0 {
		t.Errorf("first Add = %d", i)
	}
	if i := m.Add([]float32{3, 4, 99}); i != 1 { // extra components are ignored
		t.Errorf("second Add = %d", i)
	}
	m.Set(0, []float32{5, 6})
	if diff := cmp.Diff([]float32{5, 6, 3, 4}, m.Data); diff != "" {
		t.Errorf("Data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float32{3, 4}, m.Row(1)); diff != "" {
		t.Errorf("Row(1) (-want +got):\n%s", diff)
	}
	var nilM *Matrix
	if nilM.Len() != 0 || (&Matrix{}).Len() != 0 {
		t.Error("nil or zero Matrix has rows")
	}
}

// naiveTopK scores every kept row, sorts, and cuts: the reference TopK.
func naiveTopK(m *Matrix, q []float32, k int, minScore float32, keep func(int) bool) []Result {
	var all []Result
	for i := range m.Len() {
		if keep != nil && !keep(i) {
			continue
		}
		if s := Dot(q, m.Row(i)); s >= minScore {
			all = append(all, Result{i, s})
		}
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].Score != all[b].Score {
			return all[a].Score > all[b].Score
		}
		return all[a].Row < all[b].Row
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}

func TestTopKMatchesNaiveSort(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	m := randomMatrix(r, 2000, 32)
	// Duplicate rows make exact ties.
	for i := 0; i < 200; i++ {
		m.Set(1000+i, m.Row(i))
	}
	tests := []struct {
		name     string
		k        int
		minScore float32
		keep     func(int) bool
	}{
		{"top 1", 1, -2, nil},
		{"top 10", 10, -2, nil},
		{"top 100 with ties", 100, -2, nil},
		{"min score", 50, 0.2, nil},
		{"min score drops all", 10, 1.5, nil},
		{"keep filter", 25, -2, func(i int) bool { return i%3 == 0 }},
		{"keep none", 10, -2, func(int) bool { return false }},
		{"k greater than n", 5000, -2, nil},
		{"k huge", math.MaxInt, 0.3, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for trial := range 5 {
				q := m.Row(trial * 7) // a duplicated row: ties at the top
				if trial > 2 {
					q = randomUnit(rand.New(rand.NewPCG(uint64(trial), 9)), 32)
				}
				got := m.TopK(q, tc.k, tc.minScore, tc.keep)
				want := naiveTopK(m, q, tc.k, tc.minScore, tc.keep)
				if diff := cmp.Diff(want, got, cmpEmpty); diff != "" {
					t.Fatalf("trial %d (-naive +TopK):\n%s", trial, diff)
				}
				for _, res := range got {
					if tc.keep != nil && !tc.keep(res.Row) {
						t.Fatalf("filtered row %d in the results", res.Row)
					}
				}
			}
		})
	}
}

// cmpEmpty treats nil and empty result lists alike.
var cmpEmpty = cmpopts.EquateEmpty()

func TestTopKTiesPreferLowerRows(t *testing.T) {
	t.Parallel()
	m := NewMatrix(2)
	for range 5 {
		m.Add([]float32{1, 0})
	}
	got := m.TopK([]float32{1, 0}, 3, 0, nil)
	want := []Result{{0, 1}, {1, 1}, {2, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TopK (-want +got):\n%s", diff)
	}
}

func TestTopKNoResults(t *testing.T) {
	t.Parallel()
	m := randomMatrix(rand.New(rand.NewPCG(7, 8)), 10, 4)
	nan := float32(math.NaN())
	tests := map[string]func() []Result{
		"dimension mismatch": func() []Result { return m.TopK([]float32{1, 0, 0}, 5, -2, nil) },
		"k zero":             func() []Result { return m.TopK(m.Row(0), 0, -2, nil) },
		"k negative":         func() []Result { return m.TopK(m.Row(0), -1, -2, nil) },
		"empty matrix":       func() []Result { return NewMatrix(4).TopK([]float32{1, 0, 0, 0}, 5, -2, nil) },
		"nil matrix":         func() []Result { var n *Matrix; return n.TopK([]float32{1}, 5, -2, nil) },
		"NaN query":          func() []Result { return m.TopK([]float32{nan, 0, 0, 0}, 5, -2, nil) },
	}
	for name, f := range tests {
		if got := f(); len(got) != 0 {
			t.Errorf("%s: TopK = %v, want none", name, got)
		}
	}
}

// TestTopKParallelEqualsSerial runs a scan big enough to be split across
// goroutines and compares it with one serial pass. It sets GOMAXPROCS, so
// it does not run in parallel with other tests.
func TestTopKParallelEqualsSerial(t *testing.T) {
	prev := runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))
	defer runtime.GOMAXPROCS(prev)
	r := rand.New(rand.NewPCG(10, 11))
	n := 3*minParallelRows + 123
	m := randomMatrix(r, n, 64)
	for i := 0; i < 300; i++ { // ties across chunk borders
		m.Set(n-1-i, m.Row(i))
	}
	var calls atomic.Int64
	keep := func(i int) bool { calls.Add(1); return i%5 != 1 }
	for trial := range 4 {
		q := m.Row(trial)
		for _, k := range []int{1, 10, 500} {
			calls.Store(0)
			got := m.TopK(q, k, -2, keep)
			if c := calls.Load(); c != int64(n) {
				t.Errorf("keep was called %d times for %d rows", c, n)
			}
			if diff := cmp.Diff(naiveTopK(m, q, k, -2, keep), got); diff != "" {
				t.Fatalf("trial %d k %d (-naive +parallel):\n%s", trial, k, diff)
			}
			if serial := m.scan(q, k, -2, keep, 0, n); !cmp.Equal(serial, got) {
				t.Fatalf("trial %d k %d: parallel differs from the serial scan", trial, k)
			}
		}
	}
}

func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return Normalize(v)
}

func randomMatrix(r *rand.Rand, n, dim int) *Matrix {
	m := NewMatrix(dim)
	m.Data = make([]float32, 0, n*dim)
	for range n {
		m.Add(randomUnit(r, dim))
	}
	return m
}
