// Package anthropic is an llm.Provider for Anthropic's Messages API, over
// plain net/http.
package anthropic
