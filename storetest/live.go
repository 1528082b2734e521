package storetest

import (
	"fmt"
	"testing"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

func turn(id string, role imprint.Role, content string, minute int) imprint.Turn {
	return imprint.Turn{ID: id, Role: role, Content: content, TS: at(minute)}
}

func turnIDs(ts []imprint.Turn) []string {
	return ids(ts, func(t imprint.Turn) string { return t.ID + ":" + t.Content })
}

func testAppendTurns(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	_, err := s.OpenEpisode(ctx, scopeA, "s1")
	wantErr(t, "OpenEpisode before any turn", err, imprint.ErrNotFound)

	ep, err := s.AppendTurns(ctx, scopeA, "s1", []imprint.Turn{
		turn("u1", imprint.RoleUser, "Book a flight to Lisbon", 0),
		turn("a1", imprint.RoleAssistant, "Which date?", 1),
	}, "ep-1")
	must(t, err)
	if ep.ID != "ep-1" || ep.Status != imprint.EpisodeOpen || ep.SessionID != "s1" || ep.Scope != scopeA {
		t.Errorf("opened episode = id %q status %q session %q scope %+v", ep.ID, ep.Status, ep.SessionID, ep.Scope)
	}
	if !ep.StartedAt.Equal(at(0).Time) || !ep.EndedAt.Equal(at(1).Time) {
		t.Errorf("episode times %s..%s, want %s..%s", ep.StartedAt, ep.EndedAt, at(0), at(1))
	}
	// The next append goes to the open episode; newID is not used, and a
	// turn id the episode already holds is skipped.
	ep, err = s.AppendTurns(ctx, scopeA, "s1", []imprint.Turn{
		turn("a1", imprint.RoleAssistant, "Which date?", 1),
		turn("", imprint.RoleTool, `{"flights": 3}`, 2),
		turn("u2", imprint.RoleUser, "May 20", 3),
	}, "ep-unused")
	must(t, err)
	want := []string{"u1:Book a flight to Lisbon", "a1:Which date?", `:{"flights": 3}`, "u2:May 20"}
	if ep.ID != "ep-1" {
		t.Errorf("second append went to episode %q, want ep-1", ep.ID)
	}
	// The append returns what it added and the total, not the whole episode.
	if d := diff(want[2:], turnIDs(ep.Turns)); d != "" || ep.TurnCount != 4 {
		t.Errorf("second append: %d turns in all, added (-want +got):\n%s", ep.TurnCount, d)
	}
	open, err := s.OpenEpisode(ctx, scopeA, "s1")
	must(t, err)
	if d := diff(want, turnIDs(open.Turns)); d != "" || open.ID != "ep-1" || !open.EndedAt.Equal(at(3).Time) {
		t.Errorf("OpenEpisode = %q ending %s, turns (-want +got):\n%s", open.ID, open.EndedAt, d)
	}
	stored, err := s.GetEpisode(ctx, scopeA, "ep-1")
	must(t, err)
	if stored.Status != imprint.EpisodeOpen || len(stored.Turns) != 4 {
		t.Errorf("GetEpisode: status %q with %d turns, want open with 4", stored.Status, len(stored.Turns))
	}
	// Other scopes and sessions see nothing.
	_, err = s.OpenEpisode(ctx, scopeB, "s1")
	wantErr(t, "OpenEpisode of another scope", err, imprint.ErrNotFound)
	_, err = s.OpenEpisode(ctx, scopeA, "s2")
	wantErr(t, "OpenEpisode of another session", err, imprint.ErrNotFound)
	// The same session id in scope B opens its own episode; a taken id is a conflict.
	_, err = s.AppendTurns(ctx, scopeB, "s1", []imprint.Turn{turn("u1", imprint.RoleUser, "hi", 0)}, "ep-1")
	wantErr(t, "AppendTurns opening an episode with a taken id", err, imprint.ErrConflict)
	epB, err := s.AppendTurns(ctx, scopeB, "s1", []imprint.Turn{turn("u1", imprint.RoleUser, "hi", 0)}, "ep-b")
	must(t, err)
	if epB.ID != "ep-b" || len(epB.Turns) != 1 || epB.TurnCount != 1 {
		t.Errorf("scope B episode = %q with %d turns (count %d), want ep-b with 1", epB.ID, len(epB.Turns), epB.TurnCount)
	}
	// The session exists after turns alone.
	if _, err := s.GetSession(ctx, scopeA, "s1"); err != nil {
		t.Errorf("GetSession after AppendTurns: %v", err)
	}

	for name, call := range map[string]func() error{
		"no session": func() error {
			_, err := s.AppendTurns(ctx, scopeA, " ", []imprint.Turn{turn("", imprint.RoleUser, "x", 0)}, "e")
			return err
		},
		"no scope": func() error {
			_, err := s.AppendTurns(ctx, imprint.Scope{}, "s", []imprint.Turn{turn("", imprint.RoleUser, "x", 0)}, "e")
			return err
		},
		"no new id": func() error {
			_, err := s.AppendTurns(ctx, scopeA, "s9", []imprint.Turn{turn("", imprint.RoleUser, "x", 0)}, "")
			return err
		},
		"bad role": func() error {
			_, err := s.AppendTurns(ctx, scopeA, "s9", []imprint.Turn{turn("", "robot", "x", 0)}, "e9")
			return err
		},
	} {
		wantErr(t, "AppendTurns "+name, call(), imprint.ErrInvalid)
	}
	_, err = s.OpenEpisode(ctx, scopeA, "s9")
	wantErr(t, "OpenEpisode after rejected appends", err, imprint.ErrNotFound)
}

func testCloseEpisode(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	for _, tc := range []struct {
		session  string
		closedBy imprint.ClosedBy
		status   imprint.EpisodeStatus
	}{
		{"s1", imprint.ClosedFinalized, imprint.EpisodeFinalized},
		{"s2", imprint.ClosedAbandoned, imprint.EpisodeAbandoned},
	} {
		ep, err := s.AppendTurns(ctx, scopeA, tc.session, []imprint.Turn{turn("u1", imprint.RoleUser, "Plan my trip", 0)}, "ep-"+tc.session)
		must(t, err)
		_, err = s.CloseEpisode(ctx, scopeB, ep.ID, tc.closedBy, nil)
		wantErr(t, "CloseEpisode from another scope", err, imprint.ErrNotFound)
		job := &imprint.Job{Kind: imprint.JobCapture, UniqueKey: imprint.CaptureJobKey(scopeA, ep.ID)}
		closed, err := s.CloseEpisode(ctx, scopeA, ep.ID, tc.closedBy, job)
		must(t, err)
		if closed.Status != tc.status || closed.ClosedBy != tc.closedBy || closed.EndedAt.IsZero() || len(closed.Turns) != 1 {
			t.Errorf("closed episode: status %q closed_by %q ended %s, %d turns", closed.Status, closed.ClosedBy, closed.EndedAt, len(closed.Turns))
		}
		stored, err := s.GetEpisode(ctx, scopeA, ep.ID)
		must(t, err)
		if stored.Status != tc.status || stored.ClosedBy != tc.closedBy {
			t.Errorf("stored episode: status %q closed_by %q, want %q %q", stored.Status, stored.ClosedBy, tc.status, tc.closedBy)
		}
		_, err = s.OpenEpisode(ctx, scopeA, tc.session)
		wantErr(t, "OpenEpisode after close", err, imprint.ErrNotFound)
		_, err = s.CloseEpisode(ctx, scopeA, ep.ID, tc.closedBy, job)
		wantErr(t, "CloseEpisode twice", err, imprint.ErrConflict)

		// The next turn opens a new episode.
		next, err := s.AppendTurns(ctx, scopeA, tc.session, []imprint.Turn{turn("u2", imprint.RoleUser, "Another task", 5)}, "ep-next-"+tc.session)
		must(t, err)
		if next.ID != "ep-next-"+tc.session || len(next.Turns) != 1 {
			t.Errorf("append after close went to %q with %d turns", next.ID, len(next.Turns))
		}
	}
	jobs := listJobs(t, s, &scopeA, imprint.JobAvailable)
	got := ids(jobs, func(j imprint.Job) string { return string(j.Kind) + ":" + j.EpisodeID + ":" + j.SessionID })
	if d := diff([]string{"capture:ep-s2:s2", "capture:ep-s1:s1"}, got); d != "" {
		t.Errorf("capture jobs enqueued by CloseEpisode (-want +got):\n%s", d)
	}
	_, err := s.CloseEpisode(ctx, scopeA, "missing", imprint.ClosedFinalized, nil)
	wantErr(t, "CloseEpisode of an unknown episode", err, imprint.ErrNotFound)
	_, err = s.CloseEpisode(ctx, scopeA, "ep-next-s1", "maybe", nil)
	wantErr(t, "CloseEpisode with an unknown closed_by", err, imprint.ErrInvalid)
	// Closing without a job enqueues nothing.
	_, err = s.CloseEpisode(ctx, scopeA, "ep-next-s1", imprint.ClosedFinalized, nil)
	must(t, err)
	if n := len(listJobs(t, s, nil, imprint.JobAvailable)); n != 2 {
		t.Errorf("%d jobs after closing without a job, want 2", n)
	}
}

// testCloseEpisodeAtomic checks that a job that cannot be enqueued leaves
// the episode open: close and enqueue are one transaction.
func testCloseEpisodeAtomic(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	ep, err := s.AppendTurns(ctx, scopeA, "s1", []imprint.Turn{turn("u1", imprint.RoleUser, "Plan my trip", 0)}, "ep-1")
	must(t, err)
	_, err = s.CloseEpisode(ctx, scopeA, ep.ID, imprint.ClosedFinalized, &imprint.Job{}) // no kind
	wantErr(t, "CloseEpisode with an invalid job", err, imprint.ErrInvalid)
	open, err := s.OpenEpisode(ctx, scopeA, "s1")
	must(t, err)
	if open.ID != ep.ID || open.Status != imprint.EpisodeOpen {
		t.Errorf("after the failed close the open episode is %q (%s), want %q open", open.ID, open.Status, ep.ID)
	}
	st, err := s.JobStats(ctx, nil)
	must(t, err)
	if st != (imprint.JobStats{}) {
		t.Errorf("the failed close left jobs: %+v", st)
	}
}

func testSubmitEpisode(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	ep := episode("ep-sub", scopeA)
	job := imprint.Job{Kind: imprint.JobCapture, UniqueKey: imprint.CaptureJobKey(scopeA, ep.ID)}
	must(t, s.SubmitEpisode(ctx, ep, job))
	got, err := s.GetEpisode(ctx, scopeA, ep.ID)
	must(t, err)
	if d := diff(ep, got); d != "" {
		t.Errorf("submitted episode (-want +got):\n%s", d)
	}
	// Submitting again while the capture is pending keeps one job.
	must(t, s.SubmitEpisode(ctx, ep, job))
	jobs := listJobs(t, s, &scopeA, imprint.JobAvailable)
	if len(jobs) != 1 || jobs[0].EpisodeID != ep.ID || jobs[0].SessionID != ep.SessionID || jobs[0].Kind != imprint.JobCapture {
		t.Errorf("jobs after two submits = %+v, want one capture job of %s", jobs, ep.ID)
	}
	// Another scope's id: conflict, and nothing written.
	other := episode("ep-sub", scopeB)
	wantErr(t, "SubmitEpisode with another scope's id", s.SubmitEpisode(ctx, other, imprint.Job{Kind: imprint.JobCapture}), imprint.ErrConflict)
	if n := len(listJobs(t, s, nil, imprint.JobAvailable)); n != 1 {
		t.Errorf("%d jobs after the conflicting submit, want 1", n)
	}
	// An invalid job: the episode is not saved either.
	fresh := episode("ep-fresh", scopeA)
	wantErr(t, "SubmitEpisode with an invalid job", s.SubmitEpisode(ctx, fresh, imprint.Job{}), imprint.ErrInvalid)
	_, err = s.GetEpisode(ctx, scopeA, "ep-fresh")
	wantErr(t, "GetEpisode after the failed submit", err, imprint.ErrNotFound)
	wantErr(t, "SubmitEpisode without id", s.SubmitEpisode(ctx, imprint.Episode{SessionID: "s", Scope: scopeA}, job), imprint.ErrInvalid)
}

func testIdleEpisodes(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	for _, x := range []struct {
		scope   imprint.Scope
		session string
		id      string
	}{{scopeA, "s1", "ep-a"}, {scopeB, "s2", "ep-b"}, {scopeA, "s3", "ep-c"}} {
		_, err := s.AppendTurns(ctx, x.scope, x.session, []imprint.Turn{turn("", imprint.RoleUser, "hello "+x.id, 0)}, x.id)
		must(t, err)
		time.Sleep(2 * time.Millisecond) // distinct append times, for the order
	}
	_, err := s.CloseEpisode(ctx, scopeA, "ep-c", imprint.ClosedFinalized, nil)
	must(t, err)

	idle, err := s.IdleEpisodes(ctx, time.Now().Add(time.Hour), 10)
	must(t, err)
	if d := diff([]string{"ep-a", "ep-b"}, ids(idle, func(e imprint.Episode) string { return e.ID })); d != "" {
		t.Errorf("IdleEpisodes(an hour ahead) (-want +got):\n%s", d)
	}
	if len(idle) > 0 && (idle[0].Scope != scopeA || len(idle[0].Turns) != 1) {
		t.Errorf("idle episode %q: scope %+v, %d turns", idle[0].ID, idle[0].Scope, len(idle[0].Turns))
	}
	one, err := s.IdleEpisodes(ctx, time.Now().Add(time.Hour), 1)
	must(t, err)
	if len(one) != 1 || one[0].ID != "ep-a" {
		t.Errorf("IdleEpisodes limit 1 = %v, want [ep-a]", ids(one, func(e imprint.Episode) string { return e.ID }))
	}
	none, err := s.IdleEpisodes(ctx, time.Now().Add(-time.Hour), 10)
	must(t, err)
	if len(none) != 0 {
		t.Errorf("IdleEpisodes(an hour ago) = %d episodes, want none", len(none))
	}
}

func testSessionsToExtract(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	appendMsgs(t, s, scopeA, "due", msg("d1", imprint.RoleUser, "I moved to Porto", 0))
	must(t, s.MarkExtractionDue(ctx, scopeA, "due", true))
	appendMsgs(t, s, scopeB, "quiet", msg("q1", imprint.RoleUser, "I like tea", 0))
	appendMsgs(t, s, scopeA, "done", msg("x1", imprint.RoleUser, "I have a cat", 0))
	pend, err := s.PendingMessages(ctx, scopeA, "done", 0)
	must(t, err)
	must(t, s.AdvanceCursor(ctx, scopeA, "done", pend[len(pend)-1].Seq, "pets", time.Now()))
	// Due, but everything extracted: nothing to do.
	appendMsgs(t, s, scopeC, "due-empty", msg("e1", imprint.RoleUser, "hello there", 0))
	pend, err = s.PendingMessages(ctx, scopeC, "due-empty", 0)
	must(t, err)
	must(t, s.AdvanceCursor(ctx, scopeC, "due-empty", pend[0].Seq, "", time.Now()))
	must(t, s.MarkExtractionDue(ctx, scopeC, "due-empty", true))
	// Only turns, no messages.
	_, err = s.AppendTurns(ctx, scopeA, "turns-only", []imprint.Turn{turn("", imprint.RoleTool, "ok", 0)}, "ep")
	must(t, err)

	key := func(ss []imprint.Session) []string {
		return ids(ss, func(x imprint.Session) string { return x.Scope.Agent + "/" + x.Scope.Tenant + "/" + x.ID })
	}
	check := func(label string, idleBefore time.Time, want []string) {
		t.Helper()
		got, err := s.SessionsToExtract(ctx, idleBefore, 10)
		must(t, err)
		if d := diff(want, key(got)); d != "" {
			t.Errorf("SessionsToExtract %s (-want +got):\n%s", label, d)
		}
	}
	check("nothing idle yet", time.Now().Add(-time.Hour), []string{"claude/acme/due"})
	check("all idle", time.Now().Add(time.Hour), []string{"claude/acme/due", "codex/acme/quiet"})

	// A new message makes the extracted session pending again, but not idle.
	appendMsgs(t, s, scopeA, "done", msg("x2", imprint.RoleUser, "The cat is called Miso", 1))
	check("after a new message", time.Now().Add(-time.Hour), []string{"claude/acme/due"})
	check("after a new message, later", time.Now().Add(time.Hour), []string{"claude/acme/due", "codex/acme/quiet", "claude/acme/done"})
	// A duplicate append does not count as activity or pending work.
	pend, err = s.PendingMessages(ctx, scopeB, "quiet", 0)
	must(t, err)
	must(t, s.AdvanceCursor(ctx, scopeB, "quiet", pend[0].Seq, "", time.Now()))
	appendMsgs(t, s, scopeB, "quiet", msg("q1", imprint.RoleUser, "I like tea", 0))
	check("after extraction and a duplicate", time.Now().Add(time.Hour), []string{"claude/acme/due", "claude/acme/done"})

	limited, err := s.SessionsToExtract(ctx, time.Now().Add(time.Hour), 1)
	must(t, err)
	if d := diff([]string{"claude/acme/due"}, key(limited)); d != "" {
		t.Errorf("SessionsToExtract limit 1 (-want +got):\n%s", d)
	}
}

// testAppendTurnsLongEpisode checks an open episode of many appends: each
// append returns only its own turns and the running total, a repeat adds
// nothing, every read assembles the whole episode in order, and closing it
// keeps every turn; an open episode saved whole and then appended to keeps
// its saved turns ahead of the new ones.
func testAppendTurnsLongEpisode(t *testing.T, s imprint.ServiceStore) {
	ctx := ctxFor(t)
	var want []string
	for i := range 300 {
		tn := turn(fmt.Sprintf("t%03d", i), imprint.RoleAssistant, fmt.Sprintf("step %d", i), i)
		ep, err := s.AppendTurns(ctx, scopeA, "long", []imprint.Turn{tn}, "ep-long")
		must(t, err)
		want = append(want, tn.ID+":"+tn.Content)
		if ep.ID != "ep-long" || ep.TurnCount != i+1 || len(ep.Turns) != 1 || ep.Turns[0].ID != tn.ID {
			t.Fatalf("append %d: episode %q count %d with %d turns returned", i, ep.ID, ep.TurnCount, len(ep.Turns))
		}
	}
	again, err := s.AppendTurns(ctx, scopeA, "long", []imprint.Turn{turn("t010", imprint.RoleAssistant, "step 10", 10)}, "unused")
	must(t, err)
	if len(again.Turns) != 0 || again.TurnCount != 300 {
		t.Errorf("repeated turn: added %d, count %d, want 0 and 300", len(again.Turns), again.TurnCount)
	}
	open, err := s.OpenEpisode(ctx, scopeA, "long")
	must(t, err)
	got, err := s.GetEpisode(ctx, scopeA, "ep-long")
	must(t, err)
	idle, err := s.IdleEpisodes(ctx, time.Now().Add(time.Hour), 10)
	must(t, err)
	closed, err := s.CloseEpisode(ctx, scopeA, "ep-long", imprint.ClosedFinalized, nil)
	must(t, err)
	after, err := s.GetEpisode(ctx, scopeA, "ep-long")
	must(t, err)
	for name, ep := range map[string]imprint.Episode{"OpenEpisode": open, "GetEpisode": got, "CloseEpisode": closed, "GetEpisode after close": after} {
		if d := diff(want, turnIDs(ep.Turns)); d != "" {
			t.Errorf("%s turns (-want +got):\n%s", name, d)
		}
		if !ep.StartedAt.Equal(at(0).Time) || !ep.EndedAt.Equal(at(299).Time) {
			t.Errorf("%s times %s..%s, want %s..%s", name, ep.StartedAt, ep.EndedAt, at(0), at(299))
		}
	}
	if len(idle) != 1 || len(idle[0].Turns) != 300 {
		t.Errorf("IdleEpisodes: %d episodes, want ep-long with 300 turns", len(idle))
	}

	saved := episode("ep-saved", scopeA)
	saved.SessionID, saved.Status, saved.ClosedBy = "saved", imprint.EpisodeOpen, ""
	must(t, s.SaveEpisode(ctx, saved))
	ep, err := s.AppendTurns(ctx, scopeA, "saved", []imprint.Turn{turn("new", imprint.RoleUser, "one more", 50)}, "unused")
	must(t, err)
	wantSaved := append(turnIDs(saved.Turns), "new:one more")
	if ep.ID != "ep-saved" || ep.TurnCount != len(wantSaved) || len(ep.Turns) != 1 {
		t.Errorf("append to a saved open episode: %q count %d added %d, want ep-saved count %d added 1", ep.ID, ep.TurnCount, len(ep.Turns), len(wantSaved))
	}
	read, err := s.GetEpisode(ctx, scopeA, "ep-saved")
	must(t, err)
	if d := diff(wantSaved, turnIDs(read.Turns)); d != "" {
		t.Errorf("saved open episode after an append (-want +got):\n%s", d)
	}
	// Saving the whole episode again replaces what was appended.
	must(t, s.SaveEpisode(ctx, saved))
	read, err = s.GetEpisode(ctx, scopeA, "ep-saved")
	must(t, err)
	if d := diff(turnIDs(saved.Turns), turnIDs(read.Turns)); d != "" {
		t.Errorf("open episode saved whole again (-want +got):\n%s", d)
	}
}
