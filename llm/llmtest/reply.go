package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Reply is what the fake answers to one request.
type Reply struct {
	// Text is the model's reply text.
	Text string
	// Status is the HTTP status (default 200). A non-2xx status sends an
	// error body in the request's wire format.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Delay holds the reply back; a request cancelled meanwhile gets none.
	Delay time.Duration
	// RawBody, when set, is sent verbatim instead of a well-formed body.
	RawBody string
	// PromptTokens and CompletionTokens are the usage reported; when both
	// are zero the fake reports an estimate so that usage is present.
	PromptTokens, CompletionTokens int
	// NoUsage omits the usage object.
	NoUsage bool
}

// Text returns a reply with text s.
func Text(s string) Reply { return Reply{Text: s} }

// JSON returns a reply whose text is v encoded as JSON. A value that does
// not encode gives a 500 reply naming the problem.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		return Reply{Status: http.StatusInternalServerError, Text: fmt.Sprintf("llmtest.JSON: %v", err)}
	}
	return Reply{Text: string(b)}
}

// Fault429 returns a 429 rate-limit reply with the given Retry-After value
// (empty for none).
func Fault429(retryAfter string) Reply {
	return Reply{Status: http.StatusTooManyRequests, RetryAfter: retryAfter, Text: "rate limited"}
}

// Fault500 returns a 500 reply.
func Fault500() Reply {
	return Reply{Status: http.StatusInternalServerError, Text: "internal error"}
}

// Status returns a reply with the given non-2xx status.
func Status(code int) Reply {
	return Reply{Status: code, Text: http.StatusText(code)}
}

// Timeout returns a reply delayed by d, long enough for a client with a
// shorter timeout to give up.
func Timeout(d time.Duration) Reply {
	return Reply{Delay: d, Text: "too late"}
}

// Malformed returns a 200 reply whose body is not valid JSON, as a broken
// proxy would send.
func Malformed() Reply {
	return Reply{RawBody: `{"choices": [{"message": {"content": "trunc`}
}
