package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/vector"
)

var _ imprint.Embedder = (*OpenAI)(nil)

// fakeEmbeddings is an OpenAI-compatible /v1/embeddings server. Each text
// gets a deterministic vector derived from its FNV hash; replies list the
// vectors in reverse order so clients must sort by index. faults are
// served, in order, before normal replies.
type fakeEmbeddings struct {
	t    *testing.T
	dims int // reply dimension when the request names none

	mu       sync.Mutex
	requests []fakeRequest
	faults   []fault
}

type fakeRequest struct {
	Path          string
	Authorization string
	Model         string
	Input         []string
	Dimensions    *int
}

type fault struct {
	status     int
	retryAfter string
	body       string
	dims       int // when > 0, a normal reply with vectors of this length
}

func newFake(t *testing.T, dims int, faults ...fault) (*fakeEmbeddings, *httptest.Server) {
	f := &fakeEmbeddings{t: t, dims: dims, faults: faults}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions *int     `json:"dimensions"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{r.URL.Path, r.Header.Get("Authorization"), req.Model, req.Input, req.Dimensions})
	var ft fault
	if len(f.faults) > 0 {
		ft, f.faults = f.faults[0], f.faults[1:]
	}
	f.mu.Unlock()

	if ft.status != 0 {
		if ft.retryAfter != "" {
			w.Header().Set("Retry-After", ft.retryAfter)
		}
		w.WriteHeader(ft.status)
		_, _ = w.Write([]byte(ft.body))
		return
	}
	dims := f.dims
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	if ft.dims > 0 {
		dims = ft.dims
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- {
		data = append(data, item{"embedding", i, fakeVector(req.Input[i], dims)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)},
	})
}

func (f *fakeEmbeddings) sent() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

// fakeVector is an unnormalized vector that depends on the text.
func fakeVector(text string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	x := h.Sum64()
	v := make([]float32, dims)
	for i := range v {
		x = x*6364136223846793005 + 1442695040888963407
		v[i] = float32(int32(x>>33)) / (1 << 28)
	}
	return v
}

func unit(v []float32) []float32 { return vector.Normalize(append([]float32(nil), v...)) }

// newClient returns a client for srv whose retry waits are recorded, not slept.
func newClient(t *testing.T, srv *httptest.Server, cfg OpenAIConfig) (*OpenAI, *[]time.Duration) {
	t.Helper()
	cfg.BaseURL = srv.URL + "/v1/"
	if cfg.Model == "" {
		cfg.Model = "text-embedding-3-small"
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	o.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*waits = append(*waits, d)
		return ctx.Err()
	}
	return o, waits
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "text number " + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + " " + strings.Repeat("y", i)
	}
	return out
}

func TestOpenAIBatchesAndKeepsOrder(t *testing.T) {
	t.Parallel()
	fake, srv := newFake(t, 16)
	o, _ := newClient(t, srv, OpenAIConfig{APIKey: "test-key", BatchSize: 4})
	in := texts(10)
	got, err := o.Embed(t.Context(), in)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	var want [][]float32
	for _, s := range in {
		want = append(want, unit(fakeVector(s, 16)))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	var sizes []int
	for _, r := range fake.sent() {
		sizes = append(sizes, len(r.Input))
	}
	if diff := cmp.Diff([]int{4, 4, 2}, sizes); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
	if n := norm(got[3]); n < 0.99999 || n > 1.00001 {
		t.Errorf("vector norm %v, want 1", n)
	}
}

func TestOpenAIRequestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		dims     int
		wantDims *int
		wantName string
	}{
		{"dimensions configured", 8, ptr(8), "openai:text-embedding-3-small/8"},
		{"dimensions learned", 0, nil, "openai:text-embedding-3-small/12"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake, srv := newFake(t, 12)
			o, _ := newClient(t, srv, OpenAIConfig{APIKey: "test-key", Dimensions: tc.dims})
			if _, err := o.Embed(t.Context(), []string{"hello"}); err != nil {
				t.Fatalf("Embed: %v", err)
			}
			want := []fakeRequest{{
				Path:          "/v1/embeddings",
				Authorization: "Bearer test-key",
				Model:         "text-embedding-3-small",
				Input:         []string{"hello"},
				Dimensions:    tc.wantDims,
			}}
			if diff := cmp.Diff(want, fake.sent()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if o.Name() != tc.wantName {
				t.Errorf("Name = %q, want %q", o.Name(), tc.wantName)
			}
		})
	}
}

func TestOpenAINoKeyNoAuthorization(t *testing.T) {
	t.Parallel()
	fake, srv := newFake(t, 4)
	o, _ := newClient(t, srv, OpenAIConfig{})
	if _, err := o.Embed(t.Context(), []string{"local model"}); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if a := fake.sent()[0].Authorization; a != "" {
		t.Errorf("Authorization = %q, want none without a key", a)
	}
}

func TestOpenAIRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		faults     []fault
		maxRetries int
		wantKind   error // nil: success
		wantCalls  int
		wantWaits  []time.Duration // nil: not checked
	}{
		{"429 then ok honours Retry-After", []fault{{status: 429, retryAfter: "2", body: `{"error":{"message":"rate limited"}}`}}, 0, nil, 2, []time.Duration{2 * time.Second}},
		{"503 twice then ok", []fault{{status: 503}, {status: 502}}, 0, nil, 3, nil},
		{"500 until retries run out", []fault{{status: 500}, {status: 500}, {status: 500}, {status: 500}}, 2, imprint.ErrUnavailable, 3, nil},
		{"no retries when negative", []fault{{status: 500}}, -1, imprint.ErrUnavailable, 1, nil},
		{"400 is invalid and not retried", []fault{{status: 400, body: `{"error":{"message":"input too long"}}`}}, 0, imprint.ErrInvalid, 1, nil},
		{"401 is unavailable and not retried", []fault{{status: 401, body: `{"error":{"message":"bad key"}}`}}, 0, imprint.ErrUnavailable, 1, nil},
		{"malformed reply", []fault{{status: 200, body: `{"data": [`}}, 0, imprint.ErrUnavailable, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake, srv := newFake(t, 4, tc.faults...)
			o, waits := newClient(t, srv, OpenAIConfig{MaxRetries: tc.maxRetries})
			got, err := o.Embed(t.Context(), []string{"a", "b"})
			if tc.wantKind == nil {
				if err != nil || len(got) != 2 {
					t.Fatalf("Embed = %d vectors, %v; want 2, nil", len(got), err)
				}
			} else if !errors.Is(err, tc.wantKind) {
				t.Fatalf("Embed error = %v, want kind %v", err, tc.wantKind)
			}
			if n := len(fake.sent()); n != tc.wantCalls {
				t.Errorf("%d requests, want %d", n, tc.wantCalls)
			}
			if tc.wantWaits != nil {
				if diff := cmp.Diff(tc.wantWaits, *waits); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
			}
			if len(*waits) != tc.wantCalls-1 {
				t.Errorf("%d waits for %d requests", len(*waits), tc.wantCalls)
			}
		})
	}
}

func TestOpenAIRejectsBadReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cfg    OpenAIConfig
		faults []fault
		first  []string // embedded successfully before the faulty call
	}{
		{"reply dimension differs from configured", OpenAIConfig{Dimensions: 8}, []fault{{dims: 4}}, nil},
		{"reply dimension differs from learned", OpenAIConfig{}, []fault{{dims: 6}, {dims: 5}}, []string{"first"}},
		{"wrong count", OpenAIConfig{}, []fault{{status: 200, body: `{"data":[{"index":0,"embedding":[1,2]}]}`}}, nil},
		{"repeated index", OpenAIConfig{}, []fault{{status: 200, body: `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`}}, nil},
		{"ragged vectors", OpenAIConfig{}, []fault{{status: 200, body: `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}`}}, nil},
		{"empty vectors", OpenAIConfig{}, []fault{{status: 200, body: `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, srv := newFake(t, 4, tc.faults...)
			o, _ := newClient(t, srv, tc.cfg)
			if tc.first != nil {
				if _, err := o.Embed(t.Context(), tc.first); err != nil {
					t.Fatalf("first Embed: %v", err)
				}
			}
			_, err := o.Embed(t.Context(), []string{"a", "b"})
			if !errors.Is(err, imprint.ErrUnavailable) {
				t.Errorf("Embed error = %v, want kind unavailable", err)
			}
		})
	}
}

func TestOpenAIBlankTextsAreNotSent(t *testing.T) {
	t.Parallel()
	fake, srv := newFake(t, 4)
	o, _ := newClient(t, srv, OpenAIConfig{Dimensions: 4})
	got, err := o.Embed(t.Context(), []string{"", "real text", "  \n"})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	want := [][]float32{{0, 0, 0, 0}, unit(fakeVector("real text", 4)), {0, 0, 0, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	if r := fake.sent(); len(r) != 1 || !cmp.Equal(r[0].Input, []string{"real text"}) {
		t.Errorf("requests = %+v, want one with only the real text", r)
	}
	if _, err := o.Embed(t.Context(), nil); err != nil || len(fake.sent()) != 1 {
		t.Errorf("Embed(nil) = %v with %d requests; want no request", err, len(fake.sent()))
	}
}

func TestOpenAICancelledContext(t *testing.T) {
	t.Parallel()
	_, srv := newFake(t, 4, fault{status: 503}, fault{status: 503})
	o, _ := newClient(t, srv, OpenAIConfig{})
	ctx, cancel := context.WithCancel(t.Context())
	o.sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	_, err := o.Embed(ctx, []string{"a"})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, imprint.ErrUnavailable) {
		t.Errorf("Embed error = %v, want canceled and unavailable", err)
	}
}

func TestOpenAIAttemptTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	first := true
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		slow := first
		first = false
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
		if slow {
			select { // hang until the client gives up
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[3,4]}]}`))
	}))
	t.Cleanup(srv.Close)
	o, waits := newClient(t, srv, OpenAIConfig{Timeout: time.Second})
	got, err := o.Embed(t.Context(), []string{"a"})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	// At least one retry: on a loaded machine the fast reply may also
	// miss its attempt's deadline and be retried once more.
	if diff := cmp.Diff([][]float32{{0.6, 0.8}}, got); diff != "" || len(*waits) < 1 {
		t.Errorf("vectors (-want +got):\n%s\nwaits %v", diff, *waits)
	}
}

func TestNewOpenAIValidates(t *testing.T) {
	t.Parallel()
	for _, cfg := range []OpenAIConfig{
		{},
		{Model: "m", Dimensions: -1},
		{Model: "m", BatchSize: -1},
		{Model: "m", BaseURL: "localhost:8080"},
	} {
		if _, err := NewOpenAI(cfg); !errors.Is(err, imprint.ErrInvalid) {
			t.Errorf("NewOpenAI(%+v) error = %v, want kind invalid", cfg, err)
		}
	}
	o, err := NewOpenAI(OpenAIConfig{Model: "text-embedding-3-large"})
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	if o.url != "https://api.openai.com/v1/embeddings" || o.batchSize != 64 || o.timeout != 30*time.Second || o.maxRetries != 3 {
		t.Errorf("defaults = %s, %d, %v, %d", o.url, o.batchSize, o.timeout, o.maxRetries)
	}
	if o.Name() != "openai:text-embedding-3-large/0" {
		t.Errorf("Name before any reply = %q", o.Name())
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{"0", 0},
		{"-1", 0},
		{"86400", maxRetryAfter},
		{now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"soon", 0},
	}
	for _, tc := range tests {
		if got := parseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	t.Parallel()
	for attempt := range 8 {
		ceil := min(backoffBase<<attempt, backoffMax)
		for range 50 {
			if d := backoff(attempt); d < ceil/2 || d > ceil {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", attempt, d, ceil/2, ceil)
			}
		}
	}
}

func TestOpenAIErrorRedactsEchoedKey(t *testing.T) {
	t.Parallel()
	key := "sk-" + "proj-" + "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f"
	_, srv := newFake(t, 4, fault{status: 401, body: `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`})
	o, _ := newClient(t, srv, OpenAIConfig{APIKey: key})
	_, err := o.Embed(t.Context(), []string{"a"})
	if err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("Embed error = %v; want an error without the key", err)
	}
}

func ptr(n int) *int { return &n }
