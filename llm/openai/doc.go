// Package openai is an llm.Provider for OpenAI-compatible chat completion
// endpoints (OpenAI, DeepSeek, Qwen, vLLM, LM Studio, Ollama's /v1), over
// plain net/http.
package openai
