// Package llm is imprint's chat-model client. A Provider (llm/openai,
// llm/anthropic) makes one HTTP attempt; Client wraps a provider with what
// every operation needs: a per-attempt timeout, retries with backoff on 429,
// 5xx and network errors, a process-wide cap on in-flight requests,
// redaction of secrets before anything is sent, and a record of every
// attempt (op, tokens, latency, outcome) through an imprint.CallRecorder.
//
// Turning a reply into JSON (and its repair retry) is package llmjson's,
// which works with any imprint.LLM.
package llm
