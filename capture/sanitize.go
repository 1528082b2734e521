package capture

import (
	imprint "github.com/imprint-dev/imprint"
)

// sanitizeEpisode returns ep with every turn made safe to encode and store:
// a tool input that is not a JSON document becomes a JSON string. The
// episode's turns are copied; ep itself is not changed.
func sanitizeEpisode(ep imprint.Episode) imprint.Episode {
	turns := make([]imprint.Turn, len(ep.Turns))
	for i, t := range ep.Turns {
		t.Meta.Input = toolInput(t.Meta.Input)
		turns[i] = t
	}
	ep.Turns = turns
	return ep
}
