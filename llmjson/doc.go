// Package llmjson turns a chat model's reply into JSON for the pipelines
// that ask for it (capture, extract). ExtractJSON finds the JSON value of a
// reply tolerantly (code fences, prose around the value, trailing commas,
// invalid escapes, truncation); CompleteJSON runs one JSON operation
// against any imprint.LLM and sends one repair retry when the reply still
// fails the caller's validation. It imports only the root package and a
// JSON repair library, so a pipeline can use it without depending on a
// provider client.
package llmjson
