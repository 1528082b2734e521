package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
)

// DoctorPingOp is the op of imprint doctor's LLM test call.
const DoctorPingOp = "doctor.ping.v1"

// Check statuses.
const (
	CheckOK   = "ok"
	CheckFail = "fail"
	CheckSkip = "skip"
)

// Check is the outcome of one check of imprint doctor.
type Check struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	// Config is the configuration in effect (secrets masked), on the
	// config check only.
	Config map[string]string `json:"config,omitempty"`
}

// CheckConfig reports the configuration in effect for scope.
func CheckConfig(c *config.Config, scope imprint.Scope) Check {
	file := "no config file"
	if c.File != "" {
		file = "file " + c.File
	}
	values := map[string]string{}
	for _, e := range c.Entries() {
		values[e.Key] = e.Value
	}
	detail := fmt.Sprintf("%s; data_dir %s; store %s; llm %s; embedding %s; scope %s",
		file, c.DataDir, config.MaskURL(c.Store), describeProvider(c.LLM.Provider, c.LLM.Model), describeProvider(c.Embedding.Provider, c.Embedding.Model), scope)
	return Check{Check: "config", Status: CheckOK, Detail: detail, Config: values}
}

func describeProvider(provider, model string) string {
	if model == "" || provider == config.ProviderNone || provider == config.ProviderHash {
		return provider
	}
	return provider + "/" + model
}

// CheckStore pings the store that opening returned (st, err); where names
// it in the detail of a success.
func CheckStore(ctx context.Context, st imprint.Store, err error, where string) Check {
	r := Check{Check: "store"}
	if err == nil {
		err = st.Ping(ctx)
	}
	if err != nil {
		r.Status, r.Detail = CheckFail, err.Error()
		return r
	}
	r.Status, r.Detail = CheckOK, where+" reachable and migrated"
	if v, ok := imprint.AsVectorSearchDescriber(st); ok {
		// A store with more than one way to search vectors (PostgreSQL
		// with or without pgvector) says which it uses.
		r.Detail += "; " + v.VectorSearch()
	}
	return r
}

// CheckLLM makes one test call to the model that building returned (m,
// err), served at baseURL; a nil model (provider none) is skipped.
func CheckLLM(ctx context.Context, m imprint.LLM, err error, baseURL string) Check {
	r := Check{Check: "llm"}
	if err != nil {
		r.Status, r.Detail = CheckFail, err.Error()
		return r
	}
	if m == nil {
		r.Status, r.Detail = CheckSkip, "llm.provider is none: capture keeps found reflections with α 0.5, extraction is heuristic"
		return r
	}
	start := time.Now()
	resp, err := m.Complete(ctx, imprint.LLMRequest{
		Op:        DoctorPingOp,
		System:    "You are a health check. Reply with the single word pong.",
		Messages:  []imprint.ChatMessage{{Role: "user", Content: "ping"}},
		MaxTokens: 8,
	})
	if err != nil {
		r.Status = CheckFail
		r.Detail = fmt.Sprintf("%s %s at %s: %v", m.Provider(), m.Model(), baseURL, err)
		return r
	}
	model := m.Model()
	if resp.Model != "" {
		model = resp.Model
	}
	r.Status = CheckOK
	r.Detail = fmt.Sprintf("%s %s at %s replied in %s", m.Provider(), model, baseURL, time.Since(start).Round(time.Millisecond))
	return r
}

// CheckEmbedding embeds one text with the embedder that building returned
// (e, err); a nil embedder (provider none) is skipped.
func CheckEmbedding(ctx context.Context, e imprint.Embedder, err error) Check {
	r := Check{Check: "embedding"}
	if err != nil {
		r.Status, r.Detail = CheckFail, err.Error()
		return r
	}
	if e == nil {
		r.Status, r.Detail = CheckSkip, "embedding.provider is none: search uses keywords only"
		return r
	}
	vecs, err := e.Embed(ctx, []string{"imprint doctor: embedding check"})
	if err == nil && (len(vecs) != 1 || len(vecs[0]) == 0 || (e.Dimensions() > 0 && len(vecs[0]) != e.Dimensions())) {
		err = errors.New("the embedder returned no vector of the expected dimension")
	}
	if err != nil {
		r.Status, r.Detail = CheckFail, fmt.Sprintf("%s: %v", e.Name(), err)
		return r
	}
	r.Status, r.Detail = CheckOK, fmt.Sprintf("%s: one text embedded (%d dimensions)", e.Name(), len(vecs[0]))
	return r
}
