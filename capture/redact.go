package capture

import (
	imprint "github.com/imprint-dev/imprint"
)

// redactEpisode returns ep with fn applied to every text a turn carries
// (imprint.RedactTurns); ep's turns are copied, not changed.
func redactEpisode(ep imprint.Episode, fn func(string) string) imprint.Episode {
	ep.Turns = imprint.RedactTurns(ep.Turns, fn)
	return ep
}
