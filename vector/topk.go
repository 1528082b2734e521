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
type Matrix struct {
	Dim  int
	Data []float32
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
func (m *Matrix) Add(v []float32) int {
	m.Data = append(m.Data, v[:m.Dim]...)
	return m.Len() - 1
}

// Row returns row i (sharing memory with the matrix).
func (m *Matrix) Row(i int) []float32 { return m.Data[i*m.Dim : (i+1)*m.Dim] }

// Set overwrites row i with v.
func (m *Matrix) Set(i int, v []float32) { copy(m.Data[i*m.Dim:(i+1)*m.Dim], v) }

// minParallelRows is the size below which a scan stays on one goroutine:
// spreading a small scan costs more than it saves.
const minParallelRows = 4096

// TopK returns the k rows most similar to q (by dot product, i.e. cosine for
// unit vectors), best first, ties broken by lower row. Rows for which keep
// returns false are skipped before scoring; keep may be nil. Rows scoring
// below minScore, and NaN scores, are dropped. The scan is split over
// GOMAXPROCS goroutines for large matrices, so keep may be called
// concurrently. A q whose length is not Dim gives no results.
func (m *Matrix) TopK(q []float32, k int, minScore float32, keep func(row int) bool) []Result {
	n := m.Len()
	if n == 0 || k <= 0 || len(q) != m.Dim {
		return nil
	}
	k = min(k, n) // bounds the result buffers whatever k the caller asks for
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
