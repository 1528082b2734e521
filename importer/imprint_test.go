package importer

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	imprint "github.com/imprint-dev/imprint"
)

// episodeJSON is a §4.1 episode with a sub-agent turn, whose text is not
// an L0 message (the reader's own tests are package wire's).
const episodeJSON = `{"session_id": "s1", "scope": {"tenant": "acme", "user": "u", "agent": "a"},
 "turns": [{"role": "user", "content": "Find me a flight"},
  {"role": "assistant", "content": "Searching now.", "meta": {"is_subagent": true}},
  {"role": "tool", "content": "UA12", "meta": {"name": "search_flights"}},
  {"role": "assistant", "content": "UA12 it is."}]}`

func TestReadImprint(t *testing.T) {
	t.Parallel()
	second := strings.Replace(strings.ReplaceAll(episodeJSON, "\n", " "), `"Find me a flight"`, `"And a hotel"`, 1)
	in := "[" + episodeJSON + "," + second + "]"
	trs, err := ReadImprint(strings.NewReader(in), "eps.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 1 || trs[0].SessionID != "s1" || len(trs[0].Episodes) != 2 {
		t.Fatalf("transcripts: %+v", trs)
	}
	// The sub-agent assistant turn is not an L0 message.
	want := []string{"user: Find me a flight", "assistant: UA12 it is.", "user: And a hotel", "assistant: UA12 it is."}
	if diff := cmp.Diff(want, contents(trs[0].Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	ids := map[string]bool{}
	for _, m := range trs[0].Messages {
		ids[m.ID] = true
	}
	if len(ids) != 4 {
		t.Errorf("message ids not unique: %v", ids)
	}
	again, _ := ReadImprint(strings.NewReader(in), "eps.json")
	if diff := cmp.Diff(trs, again); diff != "" {
		t.Errorf("not idempotent:\n%s", diff)
	}

	msgs, err := ReadImprint(strings.NewReader(`{"role":"user","content":"a"}`+"\n"+`{"role":"assistant","content":"b"}`), "/x/chat-7.jsonl")
	if err != nil || len(msgs) != 1 || msgs[0].SessionID != "chat-7" || len(msgs[0].Messages) != 2 || msgs[0].Messages[0].ID == "" {
		t.Errorf("message stream: %+v %v", msgs, err)
	}
	if _, err := ReadImprint(strings.NewReader(`{"turns":[]}`), "x.json"); !errors.Is(err, imprint.ErrInvalid) {
		t.Errorf("invalid episode: err = %v", err)
	}
}
