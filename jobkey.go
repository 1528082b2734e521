package imprint

// DefaultJobMaxAttempts is how many times a job runs before it is marked
// failed when the job does not say otherwise.
const DefaultJobMaxAttempts = 8

// ExtractJobKey is the unique key of the extraction job of a session, so at
// most one unfinished extraction job exists per session. Its parts are
// escaped (ScopedKey), so distinct sessions never share a key.
func ExtractJobKey(scope Scope, sessionID string) string {
	return ScopedKey("extract", scope, sessionID)
}

// CaptureJobKey is the unique key of the capture job of an episode, so an
// episode submitted twice is captured by one unfinished job. Its parts are
// escaped (ScopedKey), so distinct episodes never share a key.
func CaptureJobKey(scope Scope, episodeID string) string {
	return ScopedKey("capture", scope, episodeID)
}
