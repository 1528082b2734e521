package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

func manyMessages(n int) []imprint.Message {
	msgs := make([]imprint.Message, n)
	for i := range msgs {
		role := imprint.RoleUser
		if i%2 == 1 {
			role = imprint.RoleAssistant
		}
		msgs[i] = imprint.Message{ID: fmt.Sprintf("m%05d", i), Role: role, Content: fmt.Sprintf("message number %d about the deploy", i)}
	}
	return msgs
}

func manyTurns(n int) []imprint.Turn {
	turns := make([]imprint.Turn, n)
	for i := range turns {
		role := imprint.RoleUser
		if i%2 == 1 {
			role = imprint.RoleAssistant
		}
		turns[i] = imprint.Turn{Role: role, Content: fmt.Sprintf("turn number %d", i)}
	}
	return turns
}

// TestMaxTurnsPerRequestRefusesAndWritesNothing: a raw post one over
// server.max_turns_per_request is 413 too_large naming the limit, on every
// route that takes turns, and nothing of it is stored.
func TestMaxTurnsPerRequestRefusesAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	ctx := context.Background()
	sc := imprint.DefaultScope()
	cases := []struct {
		name, path string
		body       any
	}{
		{"messages", "/v1/messages", map[string]any{"session_id": "big-m", "messages": manyMessages(DefaultMaxTurnsPerRequest + 1)}},
		{"turns", "/v1/sessions/big-t/turns", map[string]any{"turns": manyTurns(DefaultMaxTurnsPerRequest + 1)}},
		{"episode", "/v1/episodes", map[string]any{"id": "big-e", "session_id": "big-e", "turns": manyTurns(DefaultMaxTurnsPerRequest + 1)}},
	}
	for _, c := range cases {
		r := e.do(http.MethodPost, c.path, c.body)
		if r.status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: %d %s, want 413", c.name, r.status, r.body)
			continue
		}
		code, msg := r.errCode(t)
		if code != CodeTooLarge || !strings.Contains(msg, "1000") || !strings.Contains(msg, "server.max_turns_per_request") {
			t.Errorf("%s: %s %q, want too_large naming the limit", c.name, code, msg)
		}
	}
	if n, err := e.db.CountPending(ctx, sc, "big-m"); err != nil || n != 0 {
		t.Errorf("messages stored after a refused post: %d %v", n, err)
	}
	if _, err := e.db.OpenEpisode(ctx, sc, "big-t"); err == nil {
		t.Errorf("an episode was opened by a refused turns post")
	}
	if _, err := e.db.GetEpisode(ctx, sc, "big-e"); err == nil {
		t.Errorf("a refused episode was stored")
	}
	// Exactly the limit is taken.
	if r := e.do(http.MethodPost, "/v1/messages", map[string]any{"session_id": "ok-m", "messages": manyMessages(DefaultMaxTurnsPerRequest)}); r.status != http.StatusOK {
		t.Errorf("a post of exactly the limit: %d %s", r.status, r.body)
	}
}

// TestClientSplitsLargePosts: 2,500 messages and 2,500 live turns posted
// through the client land whole and in order on a server with the default
// limit, and a client that believes in a higher limit than the server's
// still lands everything (it halves its chunks on 413).
func TestClientSplitsLargePosts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sc := imprint.DefaultScope()
	e := newEnv(t, Config{MaxTurnsPerRequest: 700})
	for _, limit := range []int{0, 5000} {
		c := *e.c
		c.MaxTurnsPerRequest = limit
		sid := fmt.Sprintf("split-%d", limit)
		res, err := c.Record(ctx, sc, sid, manyMessages(2500))
		if err != nil {
			t.Fatalf("client limit %d: record: %v", limit, err)
		}
		if res.RecordedCount != 2500 || len(res.MessageIDs) != 2500 || res.MessageIDs[2499] != "m02499" {
			t.Errorf("client limit %d: recorded %d (%d ids)", limit, res.RecordedCount, len(res.MessageIDs))
		}
		if n, err := e.db.CountPending(ctx, sc, sid); err != nil || n != 2500 {
			t.Errorf("client limit %d: %d messages stored, want 2500 (%v)", limit, n, err)
		}
		epID, count, err := c.AppendTurns(ctx, sc, sid+"-live", manyTurns(2500))
		if err != nil || count != 2500 {
			t.Fatalf("client limit %d: append turns: %d %v", limit, count, err)
		}
		ep, err := e.db.OpenEpisode(ctx, sc, sid+"-live")
		if err != nil || ep.ID != epID || len(ep.Turns) != 2500 || ep.Turns[2499].Content != "turn number 2499" {
			t.Errorf("client limit %d: open episode %s has %d turns (%v)", limit, ep.ID, len(ep.Turns), err)
		}
	}
}

// TestClientSplitsLongEpisode: an episode over the limit is submitted as
// consecutive episodes cut before user turns, together holding every turn.
func TestClientSplitsLongEpisode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sc := imprint.DefaultScope()
	e := newEnv(t, Config{})
	turns := manyTurns(2500)
	id, err := e.c.SubmitEpisode(ctx, imprint.Episode{ID: "long", SessionID: "long", Scope: sc, Turns: turns})
	if err != nil || id != "long" {
		t.Fatalf("submit: %q %v", id, err)
	}
	total := 0
	for k, pid := range []string{"long", "long~2", "long~3"} {
		ep, err := e.db.GetEpisode(ctx, sc, pid)
		if err != nil {
			t.Fatalf("part %d (%s): %v", k+1, pid, err)
		}
		if ep.Turns[0].Content != turns[total].Content || ep.Turns[0].Role != imprint.RoleUser {
			t.Errorf("part %s starts with %+v, want turn %d, a user turn", pid, ep.Turns[0], total)
		}
		total += len(ep.Turns)
	}
	if total != len(turns) {
		t.Errorf("parts hold %d turns, want %d", total, len(turns))
	}
}
