package ingest

import (
	"fmt"
	"io"
	"strings"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/wire"
)

// ReadEpisodeFiles reads every named file (stdin for "-", or for no name
// at all) as imprint episodes, calling warn for each input line it had to
// skip. ErrInvalid naming the file and field for invalid input, and for
// input without any episode; a folder or an agent's transcript (which
// imprint import reads) says so and names the command to run.
func ReadEpisodeFiles(stdin io.Reader, names []string, warn func(wire.Warning)) ([]imprint.Episode, error) {
	if len(names) == 0 {
		names = []string{"-"}
	}
	var all []imprint.Episode
	for _, name := range names {
		r, err := openInput(stdin, name, "to import a folder of transcripts, run `imprint import "+name+"`")
		if err != nil {
			return nil, err
		}
		defer r.Close()
		eps, ws, err := wire.ReadEpisodes(r, name)
		if err != nil {
			return nil, transcriptHint(name, "episodes", err)
		}
		for _, w := range ws {
			warn(w)
		}
		if len(eps) == 0 {
			return nil, imprint.Invalidf("%s: no episodes in it (an empty list)", name)
		}
		all = append(all, eps...)
	}
	return all, nil
}

// openInput opens the input file name, or stdin for "-" (closing it then
// does nothing); dirHint says what to run when name is a folder.
func openInput(stdin io.Reader, name, dirHint string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(stdin), nil
	}
	f, err := wire.OpenFile(name, dirHint)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// transcriptHint returns err, or when the file name is an agent's
// transcript rather than imprint's own JSON, an error saying so and
// naming `imprint import`, which reads transcripts.
func transcriptHint(name, what string, err error) error {
	if name == "-" {
		return err
	}
	f, ferr := fileFormat(name, FormatAuto)
	if ferr != nil || f == importer.FormatImprint {
		return err
	}
	return imprint.Invalidf("%s: a %s transcript, not imprint %s; to read it, run `imprint import %s`", name, f, what, name)
}

// PrepareEpisodes prepares every episode in place (imprint.PrepareEpisode:
// validated, cleaned, redacted with redact, ids set), giving those without
// a scope the scope given, before any is captured: one bad episode stores
// nothing, and no secret leaves this machine when the episodes go to a
// service. The error names the episode's index.
func PrepareEpisodes(eps []imprint.Episode, scope imprint.Scope, redact func(string) string) error {
	now := imprint.Now()
	for i := range eps {
		if eps[i].Scope == (imprint.Scope{}) {
			eps[i].Scope = scope
		}
		p, err := imprint.PrepareEpisode(eps[i], "", now, redact)
		if err != nil {
			return fmt.Errorf("episode %d: %w", i, err)
		}
		eps[i] = p
	}
	return nil
}

// MessageBatch is one input file's messages for imprint record: the
// session and scope they go to.
type MessageBatch struct {
	SessionID string
	Scope     imprint.Scope
	Messages  []imprint.Message
	// BetweenPeople is the input's between_people.
	BetweenPeople bool
}

// ReadMessageFiles reads every named file (stdin for "-", or for no name
// at all) as §4.2 messages. session is --session: the session of a message
// stream, and when a file names its own session_id they must agree. A
// file without a scope takes scope. ErrInvalid naming the file for invalid
// input, no messages, a missing session, or a --session that contradicts the file's.
func ReadMessageFiles(stdin io.Reader, names []string, session string, scope imprint.Scope) ([]MessageBatch, error) {
	if len(names) == 0 {
		names = []string{"-"}
	}
	var out []MessageBatch
	for _, name := range names {
		r, err := openInput(stdin, name, "give a messages file (or, for a folder of transcripts, run `imprint import "+name+"`)")
		if err != nil {
			return nil, err
		}
		defer r.Close()
		doc, err := wire.ReadMessageDoc(r, name, session)
		if err != nil {
			return nil, transcriptHint(name, "messages", err)
		}
		if session != "" && doc.SessionID != session {
			return nil, imprint.Invalidf("%s: --session %q conflicts with the file's session_id %q: drop --session, or give the session the file names",
				name, session, doc.SessionID)
		}
		if strings.TrimSpace(doc.SessionID) == "" {
			return nil, imprint.Invalidf("%s: session is required: give --session or a session_id in the input", name)
		}
		if len(doc.Messages) == 0 {
			return nil, imprint.Invalidf("%s: no messages in it (an empty list)", name)
		}
		b := MessageBatch{SessionID: doc.SessionID, Scope: scope, Messages: doc.Messages, BetweenPeople: doc.BetweenPeople}
		if doc.Scope != nil {
			b.Scope = doc.Scope.WithDefaults()
		}
		out = append(out, b)
	}
	return out, nil
}
