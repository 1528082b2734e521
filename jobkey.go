package imprint

// DefaultJobMaxAttempts is how many times a job runs before it is marked
// failed when the job does not say otherwise.
const DefaultJobMaxAttempts = 8

// ExtractJobKey is the unique key of the extraction job of a session, so at
// most one unfinished extraction job exists per session.
func ExtractJobKey(scope Scope, sessionID string) string {
	return "extract:" + scope.String() + ":" + sessionID
}

// CaptureJobKey is the unique key of the capture job of an episode, so an
// episode submitted twice is captured by one unfinished job.
func CaptureJobKey(scope Scope, episodeID string) string {
	return "capture:" + scope.String() + ":" + episodeID
}
