package imprint

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

var idMu sync.Mutex
var idLastMS int64
var idSeq uint16

// NewID returns a new time-ordered UUID (version 7) in its canonical text
// form. IDs made by one process sort in creation order.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	idMu.Lock()
	ms := time.Now().UnixMilli()
	if ms <= idLastMS {
		ms = idLastMS
		idSeq++
		if idSeq >= 0x0fff {
			ms++
			idSeq = 0
		}
	} else {
		idSeq = uint16(b[6]&0x03)<<8 | uint16(b[7])
	}
	idLastMS = ms
	seq := idSeq
	idMu.Unlock()
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = 0x70 | byte(seq>>8)&0x0f
	b[7] = byte(seq)
	b[8] = b[8]&0x3f | 0x80
	return FormatUUID(b)
}

// FormatUUID writes the 16 bytes of a UUID in its canonical text form
// (8-4-4-4-12 lower-case hex digits).
func FormatUUID(b [16]byte) string {
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
