package vector

// ExactTopK is TopK by the float32 scan alone, the reference the int8 first
// pass is checked against.
func ExactTopK(m *Matrix, q []float32, k int, minScore float32, keep func(int) bool) []Result {
	n := m.Len()
	if n == 0 || k <= 0 || len(q) != m.Dim {
		return nil
	}
	return m.topKExact(q, min(k, n), minScore, keep)
}

// QuantMinRows is the size from which TopK takes the int8 first pass.
const QuantMinRows = quantMinRows

// Quantized reports whether m's int8 copy covers every row.
func Quantized(m *Matrix) bool { return len(m.qmeta) == m.Len() && len(m.q8) == len(m.Data) }

// RaceEnabled reports whether the tests run under the race detector.
const RaceEnabled = raceEnabled
