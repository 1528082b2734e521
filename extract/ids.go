package extract

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strconv"

	imprint "github.com/imprint-dev/imprint"
)

// assignIDs gives the memories extracted from window w their ids, derived
// from the scope, session, where the window starts (the session's cursor,
// which only moves when a window succeeds), each memory's sorted source
// messages and content, and its rank among identical ones. Running a
// window again after it stopped half-way (its shard lines logged, not all
// its memories stored) therefore gives the memories the same ids when the
// extractor gives the same memories, as the heuristic one does, so the
// records log holds one memory, written twice, rather than two.
//
// The ids have the form of a UUID, version 8, whose first 48 bits are the
// millisecond time of the window's first message, so they sort roughly in
// conversation order as the random version-7 ids they replace did.
func assignIDs(scope imprint.Scope, sessionID string, w Window, mems []imprint.Memory) {
	if len(w.Consumed) == 0 {
		return
	}
	first := w.Consumed[0]
	ms := max(messageTime(first).UnixMilli(), 0)
	ranks := map[[32]byte]int{}
	for i := range mems {
		src := slices.Clone(mems[i].SourceMessageIDs)
		slices.Sort(src)
		h := sha256.New()
		h.Write(imprint.AppendKeyParts(nil, 0, append([]string{scope.Tenant, scope.User, scope.Agent, sessionID, strconv.FormatInt(first.Seq, 10), first.ID,
			string(mems[i].Type), mems[i].Content}, src...)...))
		var key [32]byte
		copy(key[:], h.Sum(nil))
		rank := ranks[key]
		ranks[key]++
		h.Write([]byte(strconv.Itoa(rank)))
		sum := h.Sum(nil)
		mems[i].ID = formatID(ms, sum)
	}
}

// formatID lays out a version-8 UUID: 48 bits of ms, then hash bits.
func formatID(ms int64, sum []byte) string {
	var b [16]byte
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(ms))
	copy(b[0:6], t[2:8])
	copy(b[6:], sum[:10])
	b[6] = 0x80 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return imprint.FormatUUID(b)
}
