package vector

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkTopK measures TopK at the sizes imprint expects in SQLite mode:
// 10k and 100k stored vectors of the hash embedder's 384 dimensions, k = 10,
// with and without a keep filter. 100k takes the int8 first pass; the
// "exact" runs force the float32 scan at the same size for comparison.
func BenchmarkTopK(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	big := randomMatrix(r, 100_000, 384)
	for _, n := range []int{10_000, 100_000} {
		m := &Matrix{Dim: 384, Data: big.Data[:n*384], q8: big.q8[:n*384], qmeta: big.qmeta[:n]}
		exact := &Matrix{Dim: 384, Data: big.Data[:n*384]} // no int8 copy
		q := randomUnit(r, 384)
		for _, f := range []struct {
			name string
			m    *Matrix
			keep func(int) bool
		}{
			{"all", m, nil},
			{"keep_half", m, func(i int) bool { return i%2 == 0 }},
			{"all/exact", exact, nil},
		} {
			b.Run(fmt.Sprintf("n=%d/dim=384/%s", n, f.name), func(b *testing.B) {
				b.SetBytes(int64(n * 384 * 4))
				for b.Loop() {
					if res := f.m.TopK(q, 10, -1, f.keep); len(res) != 10 {
						b.Fatalf("%d results", len(res))
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/op")
			})
		}
	}
}

func BenchmarkDot384(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	x, y := randomUnit(r, 384), randomUnit(r, 384)
	var s float32
	for b.Loop() {
		s += Dot(x, y)
	}
	_ = s
}

func BenchmarkDecode384(b *testing.B) {
	buf := Encode(randomUnit(rand.New(rand.NewPCG(3, 3)), 384))
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if _, err := Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
