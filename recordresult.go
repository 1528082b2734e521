package imprint

// RecordResult is what recording L0 messages did (docs/CONTRACTS.md §5.3).
type RecordResult struct {
	SessionID     string   `json:"session_id"`
	RecordedCount int      `json:"recorded_count"`
	MessageIDs    []string `json:"message_ids"`
	// FilteredMessages are the messages actually recorded, after sanitizing
	// and redaction.
	FilteredMessages []FilteredMessage `json:"filtered_messages"`
	Skipped          []SkippedMessage  `json:"skipped"`
	// VectorsWritten counts the recorded messages that got a vector.
	VectorsWritten    int  `json:"vectors_written"`
	SchedulerNotified bool `json:"scheduler_notified"`
}

// FilteredMessage is one recorded message as stored.
type FilteredMessage struct {
	ID      string `json:"id"`
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

// SkippedMessage is one message that was not recorded, and why.
type SkippedMessage struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}
