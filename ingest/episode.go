package ingest

import (
	"fmt"
	"io"
	"os"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/wire"
)

// ReadEpisodeFiles reads every named file (stdin for "-", or for no name
// at all) as imprint episodes, calling warn for each input line it had to
// skip. ErrInvalid naming the file and field for invalid input, and for
// input without any episode.
func ReadEpisodeFiles(stdin io.Reader, names []string, warn func(wire.Warning)) ([]imprint.Episode, error) {
	if len(names) == 0 {
		names = []string{"-"}
	}
	var all []imprint.Episode
	for _, name := range names {
		var r io.Reader
		if name == "-" {
			r = stdin
		} else {
			f, err := os.Open(name)
			if err != nil {
				return nil, imprint.Invalidf("%s: %v", name, err)
			}
			defer f.Close()
			r = f
		}
		eps, ws, err := wire.ReadEpisodes(r, name)
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			warn(w)
		}
		all = append(all, eps...)
	}
	if len(all) == 0 {
		return nil, imprint.Invalidf("no episodes in the input")
	}
	return all, nil
}

// PrepareEpisodes prepares every episode with r in place (validated,
// cleaned, redacted, ids set), giving those without a scope the scope
// given, before any is captured: one bad episode stores nothing. The error
// names the episode's index.
func PrepareEpisodes(r *capture.Runner, eps []imprint.Episode, scope imprint.Scope) error {
	for i := range eps {
		if eps[i].Scope == (imprint.Scope{}) {
			eps[i].Scope = scope
		}
		p, err := r.Prepare(eps[i], "")
		if err != nil {
			return fmt.Errorf("episode %d: %w", i, err)
		}
		eps[i] = p
	}
	return nil
}
