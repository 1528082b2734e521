// Package redact removes secrets (API keys, tokens, private keys, passwords)
// from text before imprint stores it or sends it to a provider.
//
// Each secret is replaced by a visible marker, [REDACTED:<kind>], so a
// reader sees that something was there and what it was. Recognisers are
// precompiled regular expressions guarded by a cheap literal pre-check, so
// ordinary text costs one or two scans. Redaction is idempotent: redacting
// already redacted text changes nothing.
package redact
