package extract

import (
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
// The ids are imprint.TimeOrderedID of the millisecond time of the
// window's first message, so they sort roughly in conversation order.
func assignIDs(scope imprint.Scope, sessionID string, w Window, mems []imprint.Memory) {
	if len(w.Consumed) == 0 {
		return
	}
	first := w.Consumed[0]
	ms := messageTime(first).UnixMilli()
	ranks := map[string]int{}
	for i := range mems {
		src := slices.Clone(mems[i].SourceMessageIDs)
		slices.Sort(src)
		key := string(imprint.AppendKeyParts(nil, 0, append([]string{scope.Tenant, scope.User, scope.Agent, sessionID, strconv.FormatInt(first.Seq, 10), first.ID,
			string(mems[i].Type), mems[i].Content}, src...)...))
		mems[i].ID = imprint.TimeOrderedID(ms, key, ranks[key])
		ranks[key]++
	}
}
