// Package redacttest holds a fake secret of every shape package redact
// recognises, each in a realistic sentence, for the tests of redact and of
// every path that must not store a secret.
package redacttest
