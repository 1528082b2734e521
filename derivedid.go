package imprint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// Derived ids. An id derived from what it names (a captured episode, an
// imported turn, an id-less message, an extracted memory) is the same
// every time the same thing is seen again, so capturing, importing or
// extracting again replaces rows instead of adding them. Ids are stored,
// so a way of deriving them never changes: every package derives its ids
// here, with one hash (SHA-256) over one of two input encodings (or, for
// ContentID, raw bytes), read out in the layout the stored ids have. A new
// kind of id uses DerivedID.

// DerivedID returns the id of kind (a versioned name such as
// "imprint.episode.v1") derived from parts: the SHA-256 of kind and the
// parts, each escaped and ended by 0x1f (AppendKeyParts), as a version-8
// UUID (RFC 9562). Distinct (kind, parts) give distinct ids.
func DerivedID(kind string, parts ...string) string {
	buf := AppendKeyPart(nil, derivedIDSep, kind)
	buf = AppendKeyParts(append(buf, derivedIDSep), derivedIDSep, parts...)
	sum := sha256.Sum256(buf)
	return hashUUID(sum[:16])
}

// derivedIDSep ends each part of DerivedID's hash input.
const derivedIDSep = 0x1f

// LengthPrefixedID is DerivedID for the ids of imported transcripts: the
// hash input writes each part as its length (a uvarint) and its bytes, as
// the importers always have, so a re-import finds the episodes, turns and
// messages an earlier import stored.
func LengthPrefixedID(parts ...string) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	return hashUUID(h.Sum(nil)[:16])
}

// RankedID hashes a MessageKey with the message's rank among identical ones
// (24 hex digits), so repeated identical messages get distinct ids and the
// same input always the same ones.
func RankedID(key string, rank int) string {
	sum := rankedSum(key, rank)
	return hex.EncodeToString(sum[:12])
}

// TimeOrderedID is RankedID laid out as a version-8 UUID whose first 48
// bits are ms (a millisecond Unix time, clamped at zero), so that the ids
// sort roughly in the order of the times given: the ids of extracted
// memories, which sort in conversation order as the random version-7 ids
// they replaced did.
func TimeOrderedID(ms int64, key string, rank int) string {
	sum := rankedSum(key, rank)
	var b [16]byte
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(max(ms, 0)))
	copy(b[0:6], t[2:8])
	copy(b[6:], sum[:10])
	return hashUUID(b[:])
}

// ContentID returns the id "<prefix>-<16 hex digits>" of a SHA-256 of
// data: the session id of imported input that names none and has no file
// name, so that importing the same bytes again finds the same session.
func ContentID(prefix string, data []byte) string {
	sum := sha256.Sum256(data)
	return prefix + "-" + hex.EncodeToString(sum[:8])
}

// rankedSum is the SHA-256 of key followed by rank in decimal.
func rankedSum(key string, rank int) [sha256.Size]byte {
	return sha256.Sum256(strconv.AppendInt([]byte(key), int64(rank), 10))
}

// hashUUID formats 16 bytes of a hash as a version-8 UUID: the version and
// variant bits are set, the other bits kept.
func hashUUID(b []byte) string {
	var u [16]byte
	copy(u[:], b)
	u[6] = u[6]&0x0f | 0x80
	u[8] = u[8]&0x3f | 0x80
	return FormatUUID(u)
}
