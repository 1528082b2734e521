package imprint

import (
	"context"
	"testing"
)

// capStore has every optional capability and says it supports them when
// on is set.
type capStore struct{ on bool }

func (c capStore) SupportsBatchAppend() bool { return c.on }
func (capStore) AppendMessageBatches(context.Context, []MessageBatch) ([]AppendResult, error) {
	return nil, nil
}
func (c capStore) SupportsCaptureSaver() bool                             { return c.on }
func (capStore) SaveCaptures(context.Context, []Episode, [][]Trace) error { return nil }
func (c capStore) SupportsLiveHashes() bool                               { return c.on }
func (capStore) LiveMemoryHashes(context.Context, Scope, []string) (map[string][]string, error) {
	return nil, nil
}
func (c capStore) SupportsEpisodeBatch() bool { return c.on }
func (capStore) GetEpisodes(context.Context, Scope, []string) ([]Episode, error) {
	return nil, nil
}
func (c capStore) SupportsMemoryBatch() bool                    { return c.on }
func (capStore) PutMemories(context.Context, []MemoryPut) error { return nil }
func (c capStore) SupportsTermCounts() bool                     { return c.on }
func (capStore) CountTermMatches(context.Context, Scope, Kind, []string, int) ([]int, error) {
	return nil, nil
}
func (c capStore) SupportsJobEngine() bool                      { return c.on }
func (capStore) SetJobEngine(JobEngine[int]) error              { return nil }
func (capStore) HandOverTableJobs(context.Context) (int, error) { return 0, nil }
func (c capStore) SupportsVectorSearchDescription() bool        { return c.on }
func (capStore) VectorSearch() string                           { return "vectors: scan" }
func (c capStore) SupportsRewrite() bool                        { return c.on }
func (capStore) Rewrite(func([]byte) bool) (int, error)         { return 0, nil }

// TestAsCapabilities checks that a capability is found only when the store
// implements it and says it supports it, so a wrapper can turn one off.
func TestAsCapabilities(t *testing.T) {
	t.Parallel()
	probes := map[string]func(s any) bool{
		"BatchAppender":         func(s any) bool { _, ok := AsBatchAppender(s); return ok },
		"CaptureSaver":          func(s any) bool { _, ok := AsCaptureSaver(s); return ok },
		"LiveHashLister":        func(s any) bool { _, ok := AsLiveHashLister(s); return ok },
		"EpisodeBatchReader":    func(s any) bool { _, ok := AsEpisodeBatchReader(s); return ok },
		"MemoryBatchWriter":     func(s any) bool { _, ok := AsMemoryBatchWriter(s); return ok },
		"TermCounter":           func(s any) bool { _, ok := AsTermCounter(s); return ok },
		"JobEngineHost":         func(s any) bool { _, ok := AsJobEngineHost[int](s); return ok },
		"VectorSearchDescriber": func(s any) bool { _, ok := AsVectorSearchDescriber(s); return ok },
		"LogRewriter":           func(s any) bool { _, ok := AsLogRewriter(s); return ok },
	}
	for name, probe := range probes {
		if !probe(capStore{on: true}) {
			t.Errorf("%s: a store that supports it is not found", name)
		}
		if probe(capStore{on: false}) {
			t.Errorf("%s: a store that says it does not support it is found", name)
		}
		if probe(struct{}{}) {
			t.Errorf("%s: a store without the methods is found", name)
		}
	}
	if _, ok := AsJobEngineHost[string](capStore{on: true}); ok {
		t.Error("JobEngineHost: found for another transaction type")
	}
}
