package capture

import imprint "github.com/imprint-dev/imprint"

// DeriveEpisodeID returns the id capture gives an episode without one
// (imprint.DeriveEpisodeID).
func DeriveEpisodeID(ep imprint.Episode) string { return imprint.DeriveEpisodeID(ep) }

// TraceID returns the id of the trace of step stepKey of an episode; it is
// the same on every capture of the episode.
func TraceID(episodeID, stepKey string) string {
	return imprint.DerivedID("imprint.trace.v1", episodeID, stepKey)
}
