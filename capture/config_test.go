package capture

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	conf "github.com/imprint-dev/imprint/config"
)

// TestConfigFrom: the configuration's defaults are the capture defaults,
// and every capture.* key reaches its field.
func TestConfigFrom(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(DefaultConfig(), ConfigFrom(conf.Defaults().Capture)); diff != "" {
		t.Errorf("defaults (-capture +config):\n%s", diff)
	}
	c := conf.CaptureConfig{MaxTextChars: 1001, MaxToolOutputChars: 1002, EmbedTraces: true, AlphaScoring: true,
		SynthReflections: true, LLMConcurrency: 7, BatchMode: BatchPerEpisode, BatchThreshold: 9,
		ReflectionContextMode: ContextTaskDownstream, LongEpisodeReflectMode: LongPerStepDownstream,
		DownstreamStepCount: 2, CaptureAbandoned: true}
	want := Config{MaxTextChars: 1001, MaxToolOutputChars: 1002, EmbedTraces: true, AlphaScoring: true,
		SynthReflections: true, LLMConcurrency: 7, BatchMode: BatchPerEpisode, BatchThreshold: 9,
		ReflectionContextMode: ContextTaskDownstream, LongEpisodeReflectMode: LongPerStepDownstream,
		DownstreamStepCount: 2, CaptureAbandoned: true}
	if diff := cmp.Diff(want, ConfigFrom(c)); diff != "" {
		t.Errorf("ConfigFrom (-want +got):\n%s", diff)
	}
}
