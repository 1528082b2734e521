package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/llm"
)

// Defaults used for zero Config fields.
const (
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultMaxTokens = 1024
)

// APIVersion is sent as the anthropic-version header.
const APIVersion = "2023-06-01"

// JSONInstruction is appended to the system prompt of a JSON request: the
// Messages API has no JSON mode flag.
const JSONInstruction = "Reply with one JSON value only: no prose before or after it and no code fences."

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root; /v1/messages is appended (default
	// DefaultBaseURL).
	BaseURL string
	// APIKey is sent as the x-api-key header.
	APIKey string
	// Model is the model name sent with every request.
	Model string
	// HTTPClient sends the requests (default http.DefaultClient). Timeouts
	// come from the request context.
	HTTPClient *http.Client
	// MaxTokens is sent when a request sets none (default 1024); the API
	// requires it.
	MaxTokens int
}

// Provider sends requests to the Anthropic Messages API.
type Provider struct {
	cfg Config
	url string
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	return &Provider{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/v1/messages"}
}

// Name returns "anthropic".
func (p *Provider) Name() string { return "anthropic" }

// Model returns the configured model.
func (p *Provider) Model() string { return p.cfg.Model }

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type request struct {
	Model       string    `json:"model"`
	System      string    `json:"system,omitempty"`
	Messages    []message `json:"messages"`
	MaxTokens   int       `json:"max_tokens"`
	Temperature float64   `json:"temperature"`
}

type response struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// errBadReply marks a 2xx reply that is not a usable message.
var errBadReply = errors.New("unusable reply")

// Do sends req as one POST {base}/v1/messages. A JSON request gets
// JSONInstruction appended to its system prompt. The reply's text blocks are
// joined. A non-2xx status is an *llm.HTTPError; a 2xx body that is not a
// message is an error the client retries.
func (p *Provider) Do(ctx context.Context, req imprint.LLMRequest) (imprint.LLMResponse, error) {
	body := request{
		Model:       p.cfg.Model,
		System:      req.System,
		Messages:    make([]message, 0, len(req.Messages)),
		MaxTokens:   p.cfg.MaxTokens,
		Temperature: req.Temperature,
	}
	if req.MaxTokens > 0 {
		body.MaxTokens = req.MaxTokens
	}
	if req.JSON {
		body.System = strings.TrimSpace(body.System + "\n\n" + JSONInstruction)
	}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, message{Role: m.Role, Content: m.Content})
	}
	h := http.Header{}
	h.Set("X-Imprint-Op", req.Op)
	h.Set("anthropic-version", APIVersion)
	if p.cfg.APIKey != "" {
		h.Set("x-api-key", p.cfg.APIKey)
	}
	raw, err := llm.PostJSON(ctx, p.cfg.HTTPClient, p.url, h, body)
	if err != nil {
		return imprint.LLMResponse{}, fmt.Errorf("anthropic: %w", err)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return imprint.LLMResponse{}, fmt.Errorf("anthropic: %w: decode body: %v", errBadReply, err)
	}
	if r.Type == "error" || r.Content == nil {
		msg := "no content"
		if r.Error != nil {
			msg = r.Error.Message
		}
		return imprint.LLMResponse{}, fmt.Errorf("anthropic: %w: %s", errBadReply, msg)
	}
	var text strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	out := imprint.LLMResponse{Text: text.String(), Model: r.Model}
	if r.Usage != nil {
		out.PromptTokens = r.Usage.InputTokens
		out.CompletionTokens = r.Usage.OutputTokens
	}
	return out, nil
}
