package postgres

import (
	"encoding/binary"
	"math"

	"github.com/jackc/pgx/v5/pgtype"
)

// Vectors are written as float4[] (real[]) parameters. pgx's generic array
// codec encodes a []float32 an element at a time through interfaces and
// reflection, a tenth of an import's client CPU; float4ArrayCodec writes
// the same bytes (the binary array format: one dimension with lower bound
// 1, no NULLs, each element its length and IEEE bits) in one pass, and
// leaves every other value and all reading to the codec it wraps.

// registerFloat4Array replaces the float4[] codec of a connection's type
// map with float4ArrayCodec.
func registerFloat4Array(m *pgtype.Map) {
	t, ok := m.TypeForOID(pgtype.Float4ArrayOID)
	if !ok {
		return
	}
	if _, done := t.Codec.(float4ArrayCodec); done {
		return
	}
	m.RegisterType(&pgtype.Type{Name: t.Name, OID: t.OID, Codec: float4ArrayCodec{t.Codec}})
}

// float4ArrayCodec is the float4[] codec with a direct binary encoding of
// []float32.
type float4ArrayCodec struct {
	pgtype.Codec
}

// PlanEncode implements pgtype.Codec.
func (c float4ArrayCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.([]float32); ok && format == pgtype.BinaryFormatCode {
		return encodeFloat4Array{}
	}
	return c.Codec.PlanEncode(m, oid, format, value)
}

// encodeFloat4Array encodes a []float32 as a binary float4[]; nil is NULL.
type encodeFloat4Array struct{}

// Encode implements pgtype.EncodePlan.
func (encodeFloat4Array) Encode(value any, buf []byte) ([]byte, error) {
	v := value.([]float32)
	if v == nil {
		return nil, nil
	}
	buf = binary.BigEndian.AppendUint32(buf, 1) // dimensions
	buf = binary.BigEndian.AppendUint32(buf, 0) // no NULLs
	buf = binary.BigEndian.AppendUint32(buf, pgtype.Float4OID)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(v)))
	buf = binary.BigEndian.AppendUint32(buf, 1) // lower bound
	buf = grow(buf, 8*len(v))
	for _, f := range v {
		buf = binary.BigEndian.AppendUint32(buf, 4)
		buf = binary.BigEndian.AppendUint32(buf, math.Float32bits(f))
	}
	return buf, nil
}

// grow returns b with room for n more bytes, at least doubling its
// capacity when it has to grow: b is the buffer of all the parameters of a
// statement (of a 64-row insert, hundreds of kB of vectors), which append
// grows by a quarter at a time, copying it again each time.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}
