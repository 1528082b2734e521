package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/redact"
	"github.com/imprint-dev/imprint/vector"
)

// Defaults for OpenAIConfig fields left zero.
const (
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	DefaultBatchSize     = 64
	DefaultTimeout       = 30 * time.Second
	DefaultMaxRetries    = 3
)

const (
	backoffBase     = 500 * time.Millisecond
	backoffMax      = 20 * time.Second
	maxRetryAfter   = 60 * time.Second
	maxReplyBytes   = 256 << 20
	maxErrorExcerpt = 300
)

// OpenAIConfig configures an OpenAI-compatible embedding client.
type OpenAIConfig struct {
	// BaseURL is the API root; requests go to BaseURL + "/embeddings".
	// Default DefaultOpenAIBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty.
	APIKey string
	// Model names the embedding model. Required.
	Model string
	// Dimensions, when > 0, is sent as "dimensions" and every reply must
	// match it. When 0 the dimension is learned from the first reply.
	Dimensions int
	// BatchSize is the most texts sent in one request. Default 64.
	BatchSize int
	// Timeout bounds each HTTP attempt. Default 30s.
	Timeout time.Duration
	// MaxRetries is how many times a request is retried after a 429, a 5xx
	// or a network error. Default 3; negative means no retries.
	MaxRetries int
	// HTTPClient sends the requests. Default a new http.Client.
	HTTPClient *http.Client
}

// OpenAI embeds texts through an OpenAI-compatible /v1/embeddings endpoint.
// It is safe for concurrent use.
type OpenAI struct {
	url        string
	apiKey     string
	model      string
	wantDims   int
	batchSize  int
	timeout    time.Duration
	maxRetries int
	client     *http.Client

	mu   sync.Mutex
	dims int // learned or configured; 0 until known

	// sleep waits between attempts; tests replace it to run instantly.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewOpenAI returns a client for cfg. It returns an error of kind
// imprint.ErrInvalid when Model is empty or a number is negative.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, imprint.Invalidf("embedding.model is required for the openai embedder")
	}
	if cfg.Dimensions < 0 {
		return nil, imprint.Invalidf("embedding.dimensions must not be negative, got %d", cfg.Dimensions)
	}
	if cfg.BatchSize < 0 || cfg.Timeout < 0 {
		return nil, imprint.Invalidf("embedding batch size and timeout must not be negative")
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, imprint.Invalidf("embedding.base_url must start with http:// or https://, got %q", cfg.BaseURL)
	}
	o := &OpenAI{
		url:        base + "/embeddings",
		apiKey:     cfg.APIKey,
		model:      cfg.Model,
		wantDims:   cfg.Dimensions,
		dims:       cfg.Dimensions,
		batchSize:  cfg.BatchSize,
		timeout:    cfg.Timeout,
		maxRetries: cfg.MaxRetries,
		client:     cfg.HTTPClient,
		sleep:      sleepCtx,
	}
	if o.batchSize == 0 {
		o.batchSize = DefaultBatchSize
	}
	if o.timeout == 0 {
		o.timeout = DefaultTimeout
	}
	if o.maxRetries == 0 {
		o.maxRetries = DefaultMaxRetries
	} else if o.maxRetries < 0 {
		o.maxRetries = 0
	}
	if o.client == nil {
		o.client = &http.Client{}
	}
	return o, nil
}

// Name returns "openai:<model>/<dimensions>"; the dimension is 0 until it is
// configured or learned from a reply.
func (o *OpenAI) Name() string {
	return "openai:" + o.model + "/" + strconv.Itoa(o.Dimensions())
}

// Dimensions returns the configured dimension, or the one learned from the
// first reply, or 0 before that.
func (o *OpenAI) Dimensions() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dims
}

// Embed returns one unit vector per text, in order, sending at most
// BatchSize texts per request. Blank texts are not sent and get the zero
// vector. Errors are of kind imprint.ErrInvalid when the provider rejects
// the request as malformed (HTTP 400, 413, 422) and imprint.ErrUnavailable
// otherwise: unreachable after retries, rejected credentials, or a reply
// with the wrong count, indexes or dimension.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var idx []int // positions of the texts to send
	for i, t := range texts {
		if strings.TrimSpace(t) != "" {
			idx = append(idx, i)
		}
	}
	for start := 0; start < len(idx); start += o.batchSize {
		part := idx[start:min(start+o.batchSize, len(idx))]
		batch := make([]string, len(part))
		for j, i := range part {
			batch[j] = texts[i]
		}
		vecs, err := o.embedBatch(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("embed %d texts with %s: %w", len(batch), o.model, err)
		}
		for j, i := range part {
			out[i] = vecs[j]
		}
	}
	if len(idx) < len(texts) {
		dims := o.Dimensions()
		for i := range out {
			if out[i] == nil {
				out[i] = make([]float32, dims)
			}
		}
	}
	return out, nil
}

type embeddingRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embeddingReply struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// embedBatch sends one request, retrying transient failures.
func (o *OpenAI) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingRequest{Model: o.model, Input: batch, Dimensions: o.wantDims})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		reply, retryAfter, err := o.post(ctx, body)
		if err == nil {
			return o.parse(reply, len(batch))
		}
		var t *transientError
		if !errors.As(err, &t) || attempt >= o.maxRetries || ctx.Err() != nil {
			return nil, err
		}
		wait := backoff(attempt)
		if retryAfter > 0 {
			wait = min(retryAfter, maxRetryAfter)
		}
		if err := o.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%w: waiting to retry: %w", imprint.ErrUnavailable, err)
		}
	}
}

// transientError marks a failure worth retrying.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// post makes one attempt. It returns the reply body on 200, otherwise an
// error and, for 429/503, the wait the provider asked for.
func (o *OpenAI) post(ctx context.Context, body []byte) ([]byte, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: build request: %w", imprint.ErrInvalid, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.apiKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		// The error text holds only the URL, never the key.
		return nil, 0, &transientError{fmt.Errorf("%w: post %s: %w", imprint.ErrUnavailable, o.url, err)}
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return nil, 0, &transientError{fmt.Errorf("%w: read reply: %w", imprint.ErrUnavailable, err)}
	}
	switch code := resp.StatusCode; {
	case code == http.StatusOK:
		return reply, 0, nil
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		return nil, parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
			&transientError{fmt.Errorf("%w: embeddings endpoint returned %d: %s", imprint.ErrUnavailable, code, excerpt(reply))}
	case code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge || code == http.StatusUnprocessableEntity:
		return nil, 0, fmt.Errorf("%w: embeddings endpoint rejected the request (%d): %s", imprint.ErrInvalid, code, excerpt(reply))
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return nil, 0, fmt.Errorf("%w: embeddings endpoint rejected the API key (%d): %s", imprint.ErrUnavailable, code, excerpt(reply))
	default:
		return nil, 0, fmt.Errorf("%w: embeddings endpoint returned %d: %s", imprint.ErrUnavailable, code, excerpt(reply))
	}
}

// parse validates a reply to a batch of n texts and returns its vectors in
// input order, normalized.
func (o *OpenAI) parse(reply []byte, n int) ([][]float32, error) {
	var r embeddingReply
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, fmt.Errorf("%w: decode embeddings reply: %w", imprint.ErrUnavailable, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: embeddings reply has %d vectors for %d texts", imprint.ErrUnavailable, len(r.Data), n)
	}
	o.mu.Lock()
	dims := o.dims
	o.mu.Unlock()
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("%w: embeddings reply has a missing or repeated index %d", imprint.ErrUnavailable, d.Index)
		}
		if dims == 0 {
			dims = len(d.Embedding)
		}
		if len(d.Embedding) != dims || dims == 0 {
			return nil, fmt.Errorf("%w: embeddings reply has a vector of %d dimensions, want %d", imprint.ErrUnavailable, len(d.Embedding), dims)
		}
		v := make([]float32, dims)
		for i, x := range d.Embedding {
			f := float32(x)
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("%w: embeddings reply has a non-finite component", imprint.ErrUnavailable)
			}
			v[i] = f
		}
		out[d.Index] = vector.Normalize(v)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dims == 0 {
		o.dims = dims
	} else if o.dims != dims {
		return nil, fmt.Errorf("%w: embeddings reply has %d dimensions, earlier replies had %d", imprint.ErrUnavailable, dims, o.dims)
	}
	return out, nil
}

// backoff returns the wait before retry attempt+1: exponential with full
// jitter, so clients that failed together do not retry together.
func backoff(attempt int) time.Duration {
	ceil := min(backoffBase<<attempt, backoffMax)
	return ceil/2 + rand.N(ceil/2+1)
}

// parseRetryAfter reads a Retry-After header given in seconds or as an HTTP
// date; it returns 0 when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, int(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// excerpt returns the provider's error message, or the start of the body,
// with secrets redacted: it ends up in logs and warnings.
func excerpt(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	s := string(body)
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		s = e.Error.Message
	}
	s = strings.TrimSpace(redact.String(s))
	if len(s) > maxErrorExcerpt {
		s = strings.ToValidUTF8(s[:maxErrorExcerpt], "") + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
