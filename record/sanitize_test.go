package record

import "testing"

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "  hello world  ", "hello world"},
		{"recall block before the prompt", "<relevant-memories>\n- User likes tea\n- User lives in Oslo\n</relevant-memories>\n\nWhat should I cook tonight?", "What should I cook tonight?"},
		{"imprint recall with attributes", `<imprint-recall budget="400">standing: reply in English</imprint-recall> fix the bug`, "fix the bug"},
		{"memory context, any case", "<Memory-Context>\nold facts\n</MEMORY-CONTEXT>\nhi", "hi"},
		{"system reminder in the middle", "first line\n<system-reminder>\nThe user is on a Mac.\n</system-reminder>\nsecond line", "first line\n\nsecond line"},
		{"two blocks keep the text between", "<system-reminder>a</system-reminder>keep me<system-reminder>b</system-reminder>", "keep me"},
		{"unclosed tag is kept", "<relevant-memories> and then the user typed this", "<relevant-memories> and then the user typed this"},
		{"other tags are kept", "<div>html</div> <my-notes>x</my-notes>", "<div>html</div> <my-notes>x</my-notes>"},
		{"persona and scene blocks of memory hosts", "<user-persona>\n- likes tea\n</user-persona>\n<relevant-scenes>s1</relevant-scenes><scene-navigation>nav</scene-navigation><memory-tools-guide>use tools</memory-tools-guide>\nbook a table", "book a table"},
		{"only injected context", "<relevant-memories>x</relevant-memories>\n", ""},
		{"control characters", "a\x00b\x07c\x1b[31md\r\ne\tf\u200bg", "abc[31md\ne\tf\u200bg"},
		{"blank line runs collapse", "a\n\n\n\n  \nb", "a\n\nb"},
		{"invalid utf-8", "ok\xff\xfe!", "ok!"},
		{"byte order mark", "\ufeffhello", "hello"},
		{"nested halves", "<system-rem<system-reminder>x</system-reminder>inder>y</system-reminder>z", "z"},
		{"control character inside a tag", "<system-\x00reminder>x</system-reminder>y", "y"},
		{"chinese", "  <relevant-memories>用户喜欢猫</relevant-memories>我想养一只猫  ", "我想养一只猫"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Sanitize(tc.in); got != tc.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("<relevant-memories>x</relevant-memories>hi")
	f.Add("a\r\n\x00b")
	f.Fuzz(func(t *testing.T, s string) {
		got := Sanitize(s)
		if Sanitize(got) != got {
			t.Fatalf("Sanitize is not idempotent on %q: %q then %q", s, got, Sanitize(got))
		}
	})
}
