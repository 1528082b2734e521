package redact

import (
	"strings"
	"testing"
)

func FuzzRedact(f *testing.F) {
	for _, tc := range secretCases() {
		f.Add(tc.text)
	}
	f.Add("tokenizer=trigram")
	f.Add("https://user:pa:ss@host/x https://a:[REDACTED:url_password]@b")
	f.Add("sk-ab sk-0123456789abcdefghij0123 xsk-0123456789abcdefghijk")
	f.Fuzz(func(t *testing.T, in string) {
		checkUpdate(t, in)
		out, n := Count(in)
		if n == 0 && out != in {
			t.Fatalf("Count reported 0 but changed the text:\n%q\n%q", in, out)
		}
		if again := String(out); again != out {
			t.Fatalf("not idempotent:\nin    %q\nonce  %q\ntwice %q", in, out, again)
		}
		// No OpenAI key the redactor recognises survives.
		if keys := openAIKeysIn(out); len(keys) > 0 {
			t.Fatalf("OpenAI key %q survived:\n%q", keys[0], out)
		}
		// A recognised key from the input is gone from the output, unless
		// the same characters also occur where they are not a key (inside
		// a longer word).
		matches := openAIKeysIn(in)
		for _, m := range matches {
			if !strings.Contains(out, m) {
				continue
			}
			same := 0
			for _, o := range matches {
				if o == m {
					same++
				}
			}
			if strings.Count(in, m) == same {
				t.Fatalf("OpenAI key %q from the input survived:\n%q", m, out)
			}
		}
	})
}

// openAIKeysIn returns what the OpenAI rule recognises as keys in s, found
// independently of the anchor scan: every "sk-" at a word start where the
// pattern matches and the key has a digit, excluding Anthropic keys.
func openAIKeysIn(s string) []string {
	var keys []string
	for i := 0; i+3 <= len(s); i++ {
		if !strings.HasPrefix(s[i:], "sk-") || strings.HasPrefix(s[i:], "sk-ant-") || (i > 0 && isWordByte(s[i-1])) {
			continue
		}
		if m := openAIKey.FindString(s[i:min(len(s), i+window)]); m != "" && isOpenAIKey(m) {
			keys = append(keys, m)
			i += len(m) - 1
		}
	}
	return keys
}
