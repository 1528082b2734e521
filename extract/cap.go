package extract

import (
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

// capMemories is the seed's cap: of the memories of one extraction call,
// in extraction order, only the first maxMemories (max_memories_per_session; 0 or
// less: no cap) go on to dedup. The rest are dropped before dedup, with a
// warning saying how many.
func capMemories(mems []imprint.Memory, maxMemories int) ([]imprint.Memory, *Warning) {
	if maxMemories <= 0 || len(mems) <= maxMemories {
		return mems, nil
	}
	w := Warning{Stage: "parse", Code: "memories_capped",
		Message: fmt.Sprintf("%d memories beyond max_memories_per_session (%d) dropped", len(mems)-maxMemories, maxMemories)}
	return mems[:maxMemories], &w
}
