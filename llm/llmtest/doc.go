// Package llmtest is a fake LLM provider for tests: an httptest server that
// speaks both the OpenAI chat completions and the Anthropic Messages wire
// formats, answers each op (the X-Imprint-Op header) from a script or a
// function, injects faults (429, 500, timeouts, malformed bodies), and
// records every request it receives.
package llmtest
