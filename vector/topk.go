package vector

import (
	"runtime"
	"sort"
	"sync"
)

// Result is one scored row of a Matrix.
type Result struct {
	Row   int
	Score float32
}

// Matrix is a set of equal-length unit vectors stored contiguously, so a
// scan reads memory in order. The zero value is empty; set Dim before Add.
//
// Beside the float32 rows, Add and Set keep an int8 copy of every row
// (symmetric per-row quantisation, scale = max|x|/127) that TopK scans first
// on large matrices before re-ranking its best candidates exactly. The copy
// costs a quarter more memory per vector (Dim bytes plus 8 bytes of scale
// and L1 norm, against 4×Dim bytes of float32). Write rows through Add and
// Set: the int8 copy does not see writes made through Data or through the
// slice Row returns, and a Matrix whose Data was filled or extended
// directly is always scanned exactly (the slower path).
type Matrix struct {
	Dim  int
	Data []float32

	q8    []int8     // row i is q8[i*Dim:(i+1)*Dim]
	qmeta []rowQuant // one per row of q8
}

// NewMatrix returns an empty matrix of vectors with dim components.
func NewMatrix(dim int) *Matrix { return &Matrix{Dim: dim} }

// Len returns the number of rows.
func (m *Matrix) Len() int {
	if m == nil || m.Dim == 0 {
		return 0
	}
	return len(m.Data) / m.Dim
}

// Add appends v as a new row and returns its index. v must have Dim components.
//
// Storage grows by doubling: append's gentler growth for large slices
// copied a 100k-row index every few thousand inserts, which cost a
// one-memory write more than its SQL.
func (m *Matrix) Add(v []float32) int {
	m.Data = append(grow(m.Data, m.Dim), v[:m.Dim]...)
	i := m.Len() - 1
	if len(m.qmeta) == i { // the int8 copy covers every earlier row
		m.q8 = append(grow(m.q8, m.Dim), make([]int8, m.Dim)...)
		m.qmeta = append(m.qmeta, quantize(m.q8[i*m.Dim:], m.Row(i)))
	}
	return i
}

// grow returns s with room for n more elements, doubling its capacity
// (at least 1024 elements) when it has to move.
func grow[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	out := make([]T, len(s), max(2*cap(s), len(s)+n, 1024))
	copy(out, s)
	return out
}

// Row returns row i (sharing memory with the matrix).
func (m *Matrix) Row(i int) []float32 { return m.Data[i*m.Dim : (i+1)*m.Dim] }

// Set overwrites row i with v.
func (m *Matrix) Set(i int, v []float32) {
	copy(m.Data[i*m.Dim:(i+1)*m.Dim], v)
	if i < len(m.qmeta) && len(m.q8) == len(m.qmeta)*m.Dim {
		m.qmeta[i] = quantize(m.q8[i*m.Dim:(i+1)*m.Dim], m.Row(i))
	}
}

// minParallelRows is the size below which a scan stays on one goroutine:
// spreading a small scan costs more than it saves.
const minParallelRows = 4096

// TopK returns the k rows most similar to q (by dot product, i.e. cosine for
// unit vectors), best first, ties broken by lower row. Rows for which keep
// returns false are skipped before scoring; keep may be nil. Rows scoring
// below minScore, and NaN scores, are dropped. The scan is split over
// GOMAXPROCS goroutines for large matrices, so keep may be called
// concurrently; it is called once per row. A q whose length is not Dim
// gives no results.
//
// From quantMinRows rows on, the scan reads the int8 copy instead of the
// float32 rows (a quarter of the memory traffic), keeps the best
// max(8k, 64) rows of each part by approximate score, and re-ranks them
// exactly: scores are always exact float32 dot products and minScore is
// applied to them, but a row whose int8 score is far off its exact score
// could in principle be missed (the tests measure the same top 10 in at
// least 99% of queries).
func (m *Matrix) TopK(q []float32, k int, minScore float32, keep func(row int) bool) []Result {
	n := m.Len()
	if n == 0 || k <= 0 || len(q) != m.Dim {
		return nil
	}
	k = min(k, n) // bounds the result buffers whatever k the caller asks for
	if res, ok := m.topKQuant(q, k, minScore, keep); ok {
		return res
	}
	return m.topKExact(q, k, minScore, keep)
}

// topKExact is TopK by a float32 scan of every row; 0 < k <= Len.
func (m *Matrix) topKExact(q []float32, k int, minScore float32, keep func(row int) bool) []Result {
	n := m.Len()
	parts := runtime.GOMAXPROCS(0)
	if n < minParallelRows || parts < 2 {
		return m.scan(q, k, minScore, keep, 0, n)
	}
	chunk := (n + parts - 1) / parts
	results := make([][]Result, parts)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*chunk, min((p+1)*chunk, n)
		if lo >= hi {
			continue
		}
		wg.Go(func() { results[p] = m.scan(q, k, minScore, keep, lo, hi) })
	}
	wg.Wait()
	var all []Result
	for _, r := range results {
		all = append(all, r...)
	}
	sortResults(all)
	if len(all) > k {
		all = all[:k]
	}
	return all
}

func (m *Matrix) scan(q []float32, k int, minScore float32, keep func(int) bool, lo, hi int) []Result {
	top := make([]Result, 0, k+1)
	worst := float32(-2)
	for i := lo; i < hi; i++ {
		if keep != nil && !keep(i) {
			continue
		}
		s := Dot(q, m.Data[i*m.Dim:(i+1)*m.Dim])
		if s < minScore || s != s || (len(top) == k && s <= worst) {
			continue
		}
		// insert keeping top sorted, best first
		j := len(top)
		top = append(top, Result{})
		for j > 0 && top[j-1].Score < s {
			top[j] = top[j-1]
			j--
		}
		top[j] = Result{Row: i, Score: s}
		if len(top) > k {
			top = top[:k]
		}
		if len(top) == k {
			worst = top[k-1].Score
		}
	}
	return top
}

func sortResults(r []Result) {
	sort.Slice(r, func(i, j int) bool {
		if r[i].Score != r[j].Score {
			return r[i].Score > r[j].Score
		}
		return r[i].Row < r[j].Row
	})
}
