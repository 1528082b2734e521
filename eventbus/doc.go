// Package eventbus holds the small synchronous publish/subscribe core that
// the capture and session buses share: subscribers register for one kind of
// event or for a wildcard kind, and Publish calls them in order before it
// returns, recovering a subscriber that panics so the others still run.
package eventbus
