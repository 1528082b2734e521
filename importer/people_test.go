package importer

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/wire"
)

// LoCoMo is two people talking: both transcripts are marked, and every
// message names its speaker.
func TestReadLoCoMoBetweenPeople(t *testing.T) {
	t.Parallel()
	for _, tr := range readLoCoMoFile(t, nil) {
		if !tr.BetweenPeople {
			t.Errorf("%s: not marked between people", tr.SessionID)
		}
		for _, m := range tr.Messages {
			if m.Speaker == "" {
				t.Fatalf("%s: message %s has no speaker", tr.SessionID, m.ID)
			}
		}
	}
}

// A §4.2 messages object carries between_people and per-message
// speakers, through ReadMessageDoc and imprint import; a message stream
// has no marker.
func TestReadMessagesBetweenPeople(t *testing.T) {
	t.Parallel()
	obj := `{"session_id":"chat-9","between_people":true,"messages":[
	  {"id":"m1","role":"user","speaker":"Maria","content":"I donated my old car."},
	  {"id":"m2","role":"assistant","speaker":" John ","content":"I joined a gym."}]}`
	doc, err := wire.ReadMessageDoc(strings.NewReader(obj), "people.json", "")
	if err != nil {
		t.Fatal(err)
	}
	want := wire.MessageDoc{SessionID: "chat-9", BetweenPeople: true, Messages: []imprint.Message{
		{ID: "m1", SessionID: "chat-9", Role: imprint.RoleUser, Speaker: "Maria", Content: "I donated my old car."},
		{ID: "m2", SessionID: "chat-9", Role: imprint.RoleAssistant, Speaker: "John", Content: "I joined a gym."},
	}}
	if d := cmp.Diff(want, doc); d != "" {
		t.Errorf("ReadMessageDoc (-want +got):\n%s", d)
	}
	trs, err := ReadImprint(strings.NewReader(obj), "people.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 1 || !trs[0].BetweenPeople || trs[0].Messages[1].Speaker != "John" {
		t.Errorf("ReadImprint: %+v", trs)
	}
	stream := `{"role":"user","speaker":"Maria","content":"a"}` + "\n" + `{"role":"assistant","content":"b"}`
	trs, err = ReadImprint(strings.NewReader(stream), "/x/chat-7.jsonl")
	if err != nil || len(trs) != 1 || trs[0].BetweenPeople || trs[0].Messages[0].Speaker != "Maria" {
		t.Errorf("message stream: %+v %v", trs, err)
	}
	_, err = wire.ReadMessageDoc(strings.NewReader(`{"session_id":"s","between_people":"yes","messages":[]}`), "", "")
	if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), "between_people") {
		t.Errorf("between_people not a bool: err = %v, want ErrInvalid naming it", err)
	}
}
