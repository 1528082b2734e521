// Package storetest is the conformance suite every imprint.Store passes.
// A backend's own test calls Run with a function that opens a fresh, empty
// store; the suite checks the behaviour users rely on: scope isolation,
// idempotent message recording and capture, extraction cursors, memory
// versions, keyword search (English, Chinese, hostile input) and vector
// search with its filters.
package storetest
