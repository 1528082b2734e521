package vector

import (
	"math"
	"runtime"
	"sync"
)

// quantMinRows is the size from which TopK scans the int8 copy first: below
// it the float32 rows fit the caches well enough that the exact scan is as
// fast and the re-rank is not worth it.
const quantMinRows = 20_000

// quantMinCandidates is the fewest candidates each part of an int8 scan
// keeps for the exact re-rank, whatever k.
const quantMinCandidates = 64

// quantSlack widens the bound on the int8 score's error to cover float32
// rounding in both scores.
const quantSlack = 1e-3

// rowQuant describes one int8 row: the row is about scale × the int8
// components. l1 is the row's L1 norm, for the error bound. A NaN scale
// marks a row with a non-finite component, which the int8 scan cannot
// score: it always goes to the exact re-rank.
type rowQuant struct {
	scale, l1 float32
}

// quantize writes v quantised to int8 into dst[:len(v)], symmetric with
// scale max|v|/127, and returns the scale and the L1 norm of v.
func quantize(dst []int8, v []float32) rowQuant {
	dst = dst[:len(v)]
	var mx, l1 float32
	for _, x := range v {
		a := float32(math.Abs(float64(x)))
		if !(a <= math.MaxFloat32) { // NaN or ±Inf
			clear(dst)
			return rowQuant{scale: float32(math.NaN())}
		}
		mx = max(mx, a)
		l1 += a
	}
	if mx == 0 {
		clear(dst)
		return rowQuant{}
	}
	inv := 127 / mx
	for i, x := range v {
		r := x * inv
		if r >= 0 {
			r += 0.5
		} else {
			r -= 0.5
		}
		dst[i] = int8(max(-127, min(127, r)))
	}
	return rowQuant{scale: mx / 127, l1: l1}
}

// dot8 returns the dot product of a and b over len(a) (b is at least as
// long), accumulated in int32: exact up to 133,000 components of ±127.
func dot8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	// Re-slicing rather than indexing with an offset lets the compiler
	// address the bytes directly, about a third faster.
	for len(a) >= 8 && len(b) >= 8 {
		s0 += int32(a[0])*int32(b[0]) + int32(a[4])*int32(b[4])
		s1 += int32(a[1])*int32(b[1]) + int32(a[5])*int32(b[5])
		s2 += int32(a[2])*int32(b[2]) + int32(a[6])*int32(b[6])
		s3 += int32(a[3])*int32(b[3]) + int32(a[7])*int32(b[7])
		a, b = a[8:], b[8:]
	}
	for i := range a {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// topKQuant is TopK by an int8 first pass and an exact re-rank. It reports
// false, leaving the work to topKExact, when the matrix is small, its int8
// copy does not cover Data, q is not finite, or k is so large that the
// candidates would be most of the rows anyway.
func (m *Matrix) topKQuant(q []float32, k int, minScore float32, keep func(row int) bool) ([]Result, bool) {
	n := m.Len()
	keepN := max(8*k, quantMinCandidates)
	if n < quantMinRows || len(m.qmeta) != n || len(m.q8) != n*m.Dim || keepN > n/8 {
		return nil, false
	}
	qq := make([]int8, m.Dim)
	qm := quantize(qq, q)
	if qm.scale != qm.scale {
		return nil, false
	}
	parts := max(1, runtime.GOMAXPROCS(0))
	chunk := (n + parts - 1) / parts
	cands := make([][]int, parts)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*chunk, min((p+1)*chunk, n)
		if lo >= hi {
			continue
		}
		wg.Go(func() { cands[p] = m.scanQuant(qq, qm, keepN, minScore, keep, lo, hi) })
	}
	wg.Wait()
	var all []Result
	for _, c := range cands {
		for _, i := range c {
			s := Dot(q, m.Data[i*m.Dim:(i+1)*m.Dim])
			if s < minScore || s != s {
				continue
			}
			all = append(all, Result{Row: i, Score: s})
		}
	}
	sortResults(all)
	if len(all) > k {
		all = all[:k]
	}
	return all, true
}

// cand8 is a row of an int8 scan and its approximate score.
type cand8 struct {
	row   int
	score float32
}

// scanQuant returns the rows of [lo, hi) to re-rank for the int8 query qq:
// the best keepN kept rows by int8 score, less those whose exact score is
// provably below minScore, plus every kept row the int8 copy cannot score.
//
// With q = sq·Q + eq and r = sr·R + er, |eq_j| <= sq/2 and |er_j| <= sr/2,
// the exact q·r differs from sq·sr·(Q·R) by at most
// |q|₁·sr/2 + |r|₁·sq/2 + Dim·sq·sr/4, so a row is dropped for minScore
// only when its int8 score plus that bound is below minScore.
func (m *Matrix) scanQuant(qq []int8, qm rowQuant, keepN int, minScore float32, keep func(int) bool, lo, hi int) []int {
	dim := m.Dim
	top := make([]cand8, 0, keepN+1)
	var odd []int
	worst := float32(math.Inf(-1))
	// bound for row r = r.scale*a + r.l1*b
	a := qm.l1/2 + float32(dim)*qm.scale/4
	b := qm.scale / 2
	floor := minScore - quantSlack
	for i := lo; i < hi; i++ {
		if keep != nil && !keep(i) {
			continue
		}
		rq := m.qmeta[i]
		if rq.scale != rq.scale {
			odd = append(odd, i)
			continue
		}
		s := float32(dot8(qq, m.q8[i*dim:(i+1)*dim])) * rq.scale * qm.scale
		if (len(top) == keepN && s <= worst) || s+rq.scale*a+rq.l1*b < floor {
			continue
		}
		j := len(top)
		top = append(top, cand8{})
		for j > 0 && top[j-1].score < s {
			top[j] = top[j-1]
			j--
		}
		top[j] = cand8{row: i, score: s}
		if len(top) > keepN {
			top = top[:keepN]
		}
		if len(top) == keepN {
			worst = top[keepN-1].score
		}
	}
	rows := make([]int, 0, len(top)+len(odd))
	for _, t := range top {
		rows = append(rows, t.row)
	}
	return append(rows, odd...)
}
