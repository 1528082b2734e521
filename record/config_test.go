package record

import (
	"testing"

	"github.com/imprint-dev/imprint/config"
)

// TestConfigFrom: extraction.every_n_rounds reaches the recorder, and its
// default is the recorder's.
func TestConfigFrom(t *testing.T) {
	t.Parallel()
	if got := ConfigFrom(config.Defaults().Extraction).EveryNRounds; got != DefaultEveryNRounds {
		t.Errorf("default every_n_rounds %d, want %d", got, DefaultEveryNRounds)
	}
	if got := ConfigFrom(config.ExtractionConfig{EveryNRounds: 8}).EveryNRounds; got != 8 {
		t.Errorf("every_n_rounds 8 became %d", got)
	}
}
