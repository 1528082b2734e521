package redact

import (
	"strings"
	"testing"
)

// BenchmarkString measures redaction of real conversation text (no secrets)
// and of text full of secrets, per byte.
func BenchmarkString(b *testing.B) {
	texts := sharedTexts(b)
	ordinary := strings.Join(texts, "\n")
	if len(ordinary) > 1<<20 {
		ordinary = ordinary[:1<<20]
	}
	var secrets []string
	for _, tc := range secretCases() {
		secrets = append(secrets, tc.text)
	}
	secret := strings.Join(secrets, "\n")
	// The first 31 shapes, the corpus before the cloud, CI and payment
	// shapes were added, so numbers stay comparable across versions.
	first := strings.Join(secrets[:31], "\n")
	for _, bc := range []struct {
		name string
		text string
	}{
		{"ordinary_1MiB", ordinary},
		{"ordinary_4KiB", ordinary[:4096]},
		{"secrets", secret},
		{"secrets_first31", first},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				String(bc.text)
			}
		})
	}
}
