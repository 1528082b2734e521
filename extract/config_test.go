package extract

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint/config"
)

// TestConfigFrom: the configuration's defaults are the extraction
// defaults, and every extraction.* key a Runner uses reaches its field.
func TestConfigFrom(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(DefaultConfig(), ConfigFrom(config.Defaults().Extraction)); diff != "" {
		t.Errorf("defaults (-extract +config):\n%s", diff)
	}
	c := config.ExtractionConfig{MaxMessagesPerExtraction: 11, MaxBackgroundMessages: 6, MaxMemoriesPerSession: 12,
		EnableDedup: true, ConflictRecallTopK: 3, EveryNRounds: 4, Idle: time.Minute, LLMTimeout: 9 * time.Second, RecallMinScore: 0.25}
	want := Config{MaxMessagesPerExtraction: 11, MaxBackgroundMessages: 6, MaxMemoriesPerSession: 12,
		EnableDedup: true, ConflictRecallTopK: 3, LLMTimeout: 9 * time.Second, RecallMinScore: 0.25}
	if diff := cmp.Diff(want, ConfigFrom(c)); diff != "" {
		t.Errorf("ConfigFrom (-want +got):\n%s", diff)
	}
}
