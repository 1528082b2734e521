// Package session groups turns into episodes and announces their life cycle
// through an imprint.Publisher (ManagerDeps.Events), each event with the
// episode's scope. The episode manager publishes "episode.started" when it
// opens an episode, "episode.finalized" for every episode that closes
// (ClosedBy says whether it was finalized or abandoned) and, for an
// abandoned one, "episode.abandoned" right after it. Closing an episode
// enqueues its capture job in the same transaction; the capture runner
// announces the capture itself.
package session
