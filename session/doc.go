// Package session groups turns into episodes and announces their life cycle
// on a Bus. The episode manager publishes "episode.finalized" for every
// episode that closes (ClosedBy says whether it was finalized or abandoned)
// and, for an abandoned one, "episode.abandoned" right after it; capture
// listens for the first.
package session
