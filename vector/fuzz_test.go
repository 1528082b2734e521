package vector

import (
	"bytes"
	"math"
	"testing"
)

// FuzzDecode feeds Decode arbitrary bytes, as a corrupt BLOB would: it must
// not panic, and whatever it accepts must encode back to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Add(Encode([]float32{1, -1, 0.5}))
	f.Add(Encode([]float32{float32(math.NaN())}))
	f.Add(Encode([]float32{float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if err != nil {
			if len(b)%4 == 0 && v != nil {
				t.Fatalf("Decode returned both a vector and %v", err)
			}
			return
		}
		if len(v) != len(b)/4 {
			t.Fatalf("Decode(%d bytes) = %d components", len(b), len(v))
		}
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("component %d = %v accepted", i, x)
			}
		}
		if got := Encode(v); !bytes.Equal(got, b) {
			t.Fatalf("Encode(Decode(b)) = %x, want %x", got, b)
		}
	})
}
