package wire

import imprint "github.com/imprint-dev/imprint"

// Document is a native JSON document read leniently (ReadDocument): either
// episodes or messages.
type Document struct {
	// Episodes are the document's episodes; nil when it holds messages.
	Episodes []imprint.Episode
	// Messages is set when the document holds §4.2 messages (a messages
	// object, or a stream of message objects).
	Messages *MessageDoc
	// Positions holds each message's place in the input, skipped ones
	// counted, so that an id derived from it does not change when a broken
	// line is mended.
	Positions []int
	// Warnings name what was skipped.
	Warnings []Warning
}

// ReadDocument reads a §4.1 episodes or §4.2 messages document as a file
// import does: a malformed JSONL line and an unusable episode or message of
// a stream or list are skipped with a warning naming file and line, and the
// rest is read. session names the session of a message stream that gives
// none; it is called only for such a stream. Input with nothing usable is an
// error of kind ErrInvalid naming the field.
func ReadDocument(data []byte, file string, session func() string) (Document, error) {
	// The document is split once, its array elements labelled as episodes
	// until it turns out to hold messages.
	items, warnings, err := splitDocument(data, file, "episodes", true)
	if err != nil {
		return Document{}, err
	}
	isMessages := len(items) > 0 && !HasKey(items[0].raw, "turns") &&
		(HasKey(items[0].raw, "messages") || HasKey(items[0].raw, "role"))
	if isMessages {
		relabel(items, "messages")
		doc, pos, warnings, err := parseMessages(items, warnings, file, session(), true)
		if err != nil {
			return Document{}, err
		}
		return Document{Messages: &doc, Positions: pos, Warnings: warnings}, nil
	}
	eps, warnings, err := parseEpisodes(items, warnings, file, true)
	if err != nil {
		return Document{}, err
	}
	return Document{Episodes: eps, Warnings: warnings}, nil
}
