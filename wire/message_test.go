package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

func TestReadMessageDoc(t *testing.T) {
	t.Parallel()
	obj := `{"session_id":"chat-1","scope":{"tenant":"t","user":"u","agent":"a"},"messages":[
	  {"id":"m1","role":"user","content":"I moved to Porto","timestamp":"2026-05-01T10:00:00Z"},
	  {"role":"assistant","content":[{"type":"text","text":"Noted."}],"timestamp":1777629601000}]}`
	doc, err := ReadMessageDoc(strings.NewReader(obj), "m.json", "flag-session")
	sid, scope, msgs := doc.SessionID, doc.Scope, doc.Messages
	if err != nil {
		t.Fatal(err)
	}
	if sid != "chat-1" || scope == nil || scope.Tenant != "t" {
		t.Errorf("session %q scope %+v", sid, scope)
	}
	want := []imprint.Message{
		{ID: "m1", SessionID: "chat-1", Scope: *scope, Role: imprint.RoleUser, Content: "I moved to Porto", Timestamp: ts("2026-05-01T10:00:00Z")},
		{SessionID: "chat-1", Scope: *scope, Role: imprint.RoleAssistant, Content: "Noted.", Timestamp: ts("2026-05-01T10:00:01Z")},
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}

	stream := `{"role":"user","content":"a"}` + "\n" + `{"role":"assistant","content":"b"}` + "\n"
	doc, err = ReadMessageDoc(strings.NewReader(stream), "-", "flag-session")
	sid, scope, msgs = doc.SessionID, doc.Scope, doc.Messages
	if err != nil || sid != "flag-session" || scope != nil || len(msgs) != 2 || msgs[1].SessionID != "flag-session" {
		t.Errorf("stream: %q %v %d %v", sid, scope, len(msgs), err)
	}
}

func TestReadMessageDocInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, session, want string
	}{
		{"stream without session", `{"role":"user","content":"a"}`, "", "session_id: required"},
		{"object without session", `{"messages":[{"role":"user","content":"a"}]}`, "", "session_id: required"},
		{"missing role", `{"session_id":"s","messages":[{"role":"user","content":"a"},{"content":"b"}]}`, "", "messages[1].role: required"},
		{"tool role", `{"session_id":"s","messages":[{"role":"tool","content":"b"}]}`, "", "messages[0].role: must be user or assistant"},
		{"missing content", `{"role":"user"}`, "s", "content: required"},
		{"bad timestamp", `{"role":"user","content":"x","timestamp":"soon"}`, "s", "timestamp"},
		{"messages not a list", `{"session_id":"s","messages":{}}`, "", "messages: must be a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadMessageDoc(strings.NewReader(tt.in), "", tt.session)
			if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalid naming %q", err, tt.want)
			}
		})
	}
}
