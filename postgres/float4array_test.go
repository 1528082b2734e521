package postgres

import (
	"bytes"
	"math"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestFloat4ArrayEncodesLikePgx checks that the direct encoding of a
// []float32 parameter is byte for byte the one of pgx's generic array
// codec, in binary and in text, and that other values still encode.
func TestFloat4ArrayEncodesLikePgx(t *testing.T) {
	generic := pgtype.NewMap()
	direct := pgtype.NewMap()
	registerFloat4Array(direct)
	registerFloat4Array(direct) // twice wraps once
	if _, ok := direct.TypeForOID(pgtype.Float4ArrayOID); !ok {
		t.Fatal("float4[] is not registered")
	}
	vals := []any{
		[]float32(nil), []float32{}, []float32{1}, []float32{0.5, -0.25, 3e-39, float32(math.Inf(1)),
			float32(math.Inf(-1)), float32(math.NaN()), float32(math.Copysign(0, -1)), math.MaxFloat32},
		make([]float32, 384), []float64{1.5, 2}, []*float32{nil}, nil,
	}
	for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
		for _, v := range vals {
			want, werr := generic.Encode(pgtype.Float4ArrayOID, format, v, []byte("prefix"))
			got, gerr := direct.Encode(pgtype.Float4ArrayOID, format, v, []byte("prefix"))
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("format %d, %#v: error %v, pgx's %v", format, v, gerr, werr)
			}
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("format %d, %#v:\n got %x\nwant %x", format, v, got, want)
			}
		}
	}
	// Reading is pgx's own.
	src, err := direct.Encode(pgtype.Float4ArrayOID, pgtype.BinaryFormatCode, []float32{1, 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var back []float32
	if err := direct.Scan(pgtype.Float4ArrayOID, pgtype.BinaryFormatCode, src, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0] != 1 || back[1] != 2 {
		t.Errorf("read back %v", back)
	}
}

// BenchmarkFloat4ArrayEncode compares encoding a 384-d vector through
// pgx's generic array codec and directly.
func BenchmarkFloat4ArrayEncode(b *testing.B) {
	v := make([]float32, 384)
	for i := range v {
		v[i] = float32(i) / 384
	}
	for _, c := range []struct {
		name   string
		direct bool
	}{{"pgx", false}, {"direct", true}} {
		b.Run(c.name, func(b *testing.B) {
			m := pgtype.NewMap()
			if c.direct {
				registerFloat4Array(m)
			}
			var buf []byte
			for b.Loop() {
				var err error
				buf, err = m.Encode(pgtype.Float4ArrayOID, pgtype.BinaryFormatCode, v, buf[:0])
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
