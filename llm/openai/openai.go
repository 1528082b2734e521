package openai

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

// DefaultBaseURL is the API root used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root; /chat/completions is appended
	// (default DefaultBaseURL).
	BaseURL string
	// APIKey is sent as a bearer token; empty sends no Authorization
	// header (local servers).
	APIKey string
	// Model is the model name sent with every request.
	Model string
	// HTTPClient sends the requests (default http.DefaultClient). Timeouts
	// come from the request context.
	HTTPClient *http.Client
}

// Provider sends chat completions to an OpenAI-compatible endpoint.
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
	return &Provider{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions"}
}

// Name returns "openai".
func (p *Provider) Name() string { return "openai" }

// Model returns the configured model.
func (p *Provider) Model() string { return p.cfg.Model }

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type request struct {
	Model          string          `json:"model"`
	Messages       []message       `json:"messages"`
	Temperature    float64         `json:"temperature"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type response struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// errBadReply marks a 2xx reply that is not a usable chat completion.
var errBadReply = errors.New("unusable reply")

// Do sends req as one POST {base}/chat/completions: the system prompt as
// the first message, temperature, max_tokens when positive, and
// response_format json_object when req.JSON. A non-2xx status is an
// *llm.HTTPError; a 2xx body that is not a chat completion is an error the
// client retries.
func (p *Provider) Do(ctx context.Context, req imprint.LLMRequest) (imprint.LLMResponse, error) {
	body := request{
		Model:       p.cfg.Model,
		Messages:    make([]message, 0, len(req.Messages)+1),
		Temperature: req.Temperature,
		MaxTokens:   max(req.MaxTokens, 0),
	}
	if req.System != "" {
		body.Messages = append(body.Messages, message{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, message{Role: m.Role, Content: m.Content})
	}
	if req.JSON {
		body.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	h := http.Header{}
	h.Set("X-Imprint-Op", req.Op)
	if p.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	raw, err := llm.PostJSON(ctx, p.cfg.HTTPClient, p.url, h, body)
	if err != nil {
		return imprint.LLMResponse{}, fmt.Errorf("openai: %w", err)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return imprint.LLMResponse{}, fmt.Errorf("openai: %w: decode body: %v", errBadReply, err)
	}
	if len(r.Choices) == 0 {
		if r.Error != nil {
			return imprint.LLMResponse{}, fmt.Errorf("openai: %w: %s", errBadReply, r.Error.Message)
		}
		return imprint.LLMResponse{}, fmt.Errorf("openai: %w: no choices", errBadReply)
	}
	out := imprint.LLMResponse{Model: r.Model}
	if c := r.Choices[0].Message.Content; c != nil {
		out.Text = *c
	}
	if r.Usage != nil {
		out.PromptTokens = r.Usage.PromptTokens
		out.CompletionTokens = r.Usage.CompletionTokens
	}
	return out, nil
}
