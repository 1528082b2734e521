package ingest

import (
	"testing"

	"github.com/imprint-dev/imprint/sqlite"
)

// noEpisodeBatch is the SQLite store with its EpisodeBatchReader turned
// off: the import asks for the stored episodes one by one.
type noEpisodeBatch struct{ *sqlite.DB }

func (noEpisodeBatch) SupportsEpisodeBatch() bool { return false }

// An import of sources captured before in part captures only the new
// episodes and skips the stored ones, unchanged, whether the store reads
// them in one query (EpisodeBatchReader) or one by one.
func TestReimportSkipsCapturedEpisodes(t *testing.T) {
	t.Parallel()
	for _, batched := range []bool{true, false} {
		name := map[bool]string{true: "one read per batch", false: "one read per episode"}[batched]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srcs := tauSources(t, 10)
			db := openDB(t)
			im := newImporter(t, db, nil)
			if !batched {
				im.Store = noEpisodeBatch{db}
			}
			first, err := im.Run(t.Context(), srcs[:2])
			if err != nil {
				t.Fatal(err)
			}
			if first.Episodes == 0 || first.EpisodesSkipped != 0 {
				t.Fatalf("first import: %d episodes captured, %d skipped", first.Episodes, first.EpisodesSkipped)
			}
			traces := storeCounts(t, db, sessionsOf(t, srcs)).Traces
			again, err := im.Run(t.Context(), srcs)
			if err != nil {
				t.Fatal(err)
			}
			if again.EpisodesSkipped != first.Episodes || again.Episodes+again.EpisodesSkipped != 40 {
				t.Errorf("second import: %d episodes captured, %d skipped; want %d skipped of 40",
					again.Episodes, again.EpisodesSkipped, first.Episodes)
			}
			if got := storeCounts(t, db, sessionsOf(t, srcs)).Traces; got != traces+again.Traces {
				t.Errorf("%d traces after the second import, want %d + %d", got, traces, again.Traces)
			}
		})
	}
}
