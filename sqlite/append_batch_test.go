package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	imprint "github.com/imprint-dev/imprint"
)

func batchMsg(id string, role imprint.Role, content string) imprint.Message {
	return imprint.Message{ID: id, Role: role, Content: content,
		Timestamp: imprint.At(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))}
}

// TestAppendMessageBatchesLikeSequential appends the same batches once in
// one AppendMessageBatches call and once by AppendMessages one after
// another, and expects the same results and the same stored messages.
func TestAppendMessageBatchesLikeSequential(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	b := imprint.Scope{Tenant: "t", User: "u2", Agent: "a"}
	u, as := imprint.RoleUser, imprint.RoleAssistant
	batches := []imprint.MessageBatch{
		{Scope: a, SessionID: "s1", Messages: []imprint.Message{batchMsg("m1", u, "deploy the api"), batchMsg("m2", as, "done deploying")}},
		// Same ids in another session and another scope are new messages.
		{Scope: a, SessionID: "s2", Messages: []imprint.Message{batchMsg("m1", u, "other session")}},
		{Scope: b, SessionID: "s1", Messages: []imprint.Message{batchMsg("m1", u, "other scope")}},
		// The same session twice in one call: m2 is a duplicate of the
		// first batch, m3 repeats within the batch.
		{Scope: a, SessionID: "s1", Messages: []imprint.Message{
			batchMsg("m2", as, "done deploying"), batchMsg("m3", u, "rollback please"), batchMsg("m3", u, "rollback please")}},
		// Nothing new at all.
		{Scope: a, SessionID: "s1", Messages: []imprint.Message{batchMsg("m1", u, "deploy the api")}},
	}

	batchDB, seqDB := openTemp(t), openTemp(t)
	t.Cleanup(func() { batchDB.Close(); seqDB.Close() })
	got, err := batchDB.AppendMessageBatches(ctx, batches)
	if err != nil {
		t.Fatalf("AppendMessageBatches: %v", err)
	}
	var want []imprint.AppendResult
	for _, bt := range batches {
		res, err := seqDB.AppendMessages(ctx, bt.Scope, bt.SessionID, bt.Messages)
		if err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
		want = append(want, res)
	}
	ignoreTimes := cmpopts.IgnoreFields(imprint.Session{}, "CreatedAt", "UpdatedAt", "LastExtractedAt")
	if diff := cmp.Diff(want, got, ignoreTimes); diff != "" {
		t.Errorf("batch results differ from sequential appends (-sequential +batch):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"m3"}, got[3].Inserted); diff != "" {
		t.Errorf("fourth batch inserted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"m2", "m3"}, got[3].Duplicates); diff != "" {
		t.Errorf("fourth batch duplicates (-want +got):\n%s", diff)
	}

	for _, k := range []struct {
		scope   imprint.Scope
		session string
	}{{a, "s1"}, {a, "s2"}, {b, "s1"}} {
		wantMsgs, err := seqDB.PendingMessages(ctx, k.scope, k.session, 0)
		if err != nil {
			t.Fatal(err)
		}
		gotMsgs, err := batchDB.PendingMessages(ctx, k.scope, k.session, 0)
		if err != nil {
			t.Fatal(err)
		}
		opt := cmpopts.IgnoreFields(imprint.Message{}, "RecordedAt")
		if diff := cmp.Diff(wantMsgs, gotMsgs, opt); diff != "" {
			t.Errorf("%v/%s stored messages (-sequential +batch):\n%s", k.scope, k.session, diff)
		}
	}
	hits, err := batchDB.SearchText(ctx, imprint.TextQuery{Scope: a, Kind: imprint.KindMessage, Text: "rollback", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	// m3 first and once; the message it answers may follow (messageContext).
	n := 0
	for _, h := range hits {
		if h.ID == "m3" {
			n++
		}
	}
	if len(hits) == 0 || hits[0].ID != "m3" || n != 1 {
		t.Errorf("keyword search for a batch-appended message: got %+v, want m3 first and once", hits)
	}
}

func TestAppendMessageBatchesMarkDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sc := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	u := imprint.RoleUser
	db := openTemp(t)
	t.Cleanup(func() { db.Close() })
	res, err := db.AppendMessageBatches(ctx, []imprint.MessageBatch{
		// Two user rounds, threshold 3: not due yet.
		{Scope: sc, SessionID: "s", MarkDueAt: 3, Messages: []imprint.Message{batchMsg("m1", u, "one"), batchMsg("m2", u, "two")}},
		// Threshold 0 never marks.
		{Scope: sc, SessionID: "z", Messages: []imprint.Message{batchMsg("m1", u, "one"), batchMsg("m2", u, "two")}},
		// Third round of s in the same call: due.
		{Scope: sc, SessionID: "s", MarkDueAt: 3, Messages: []imprint.Message{batchMsg("m3", u, "three")}},
		// Only duplicates: nothing recorded, so nothing is marked.
		{Scope: sc, SessionID: "d", MarkDueAt: 1, Messages: nil},
	})
	if err != nil {
		t.Fatalf("AppendMessageBatches: %v", err)
	}
	gotDue := []bool{res[0].Session.ExtractionDue, res[1].Session.ExtractionDue, res[2].Session.ExtractionDue, res[3].Session.ExtractionDue}
	if diff := cmp.Diff([]bool{false, false, true, false}, gotDue); diff != "" {
		t.Errorf("ExtractionDue in the results (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		session string
		due     bool
	}{{"s", true}, {"z", false}, {"d", false}} {
		s, err := db.GetSession(ctx, sc, c.session)
		if err != nil {
			t.Fatal(err)
		}
		if s.ExtractionDue != c.due {
			t.Errorf("session %s stored ExtractionDue = %v, want %v", c.session, s.ExtractionDue, c.due)
		}
	}
	// A later all-duplicate batch leaves a cleared flag alone.
	if err := db.MarkExtractionDue(ctx, sc, "s", false); err != nil {
		t.Fatal(err)
	}
	res, err = db.AppendMessageBatches(ctx, []imprint.MessageBatch{{Scope: sc, SessionID: "s", MarkDueAt: 1, Messages: []imprint.Message{batchMsg("m3", u, "three")}}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Session.ExtractionDue {
		t.Errorf("an append recording nothing marked the session due")
	}
}

func TestAppendMessageBatchesValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sc := imprint.Scope{Tenant: "t", User: "u", Agent: "a"}
	db := openTemp(t)
	t.Cleanup(func() { db.Close() })
	good := imprint.MessageBatch{Scope: sc, SessionID: "s", Messages: []imprint.Message{batchMsg("m1", imprint.RoleUser, "hi")}}
	for name, bad := range map[string]imprint.MessageBatch{
		"no session":    {Scope: sc, Messages: good.Messages},
		"no scope":      {SessionID: "s", Messages: good.Messages},
		"no message id": {Scope: sc, SessionID: "s", Messages: []imprint.Message{{Role: imprint.RoleUser, Content: "x"}}},
	} {
		_, err := db.AppendMessageBatches(ctx, []imprint.MessageBatch{good, bad})
		if !errors.Is(err, imprint.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	if _, err := db.GetSession(ctx, sc, "s"); !errors.Is(err, imprint.ErrNotFound) {
		t.Errorf("a rejected call stored the valid batch's session (err %v)", err)
	}
	res, err := db.AppendMessageBatches(ctx, nil)
	if err != nil || len(res) != 0 {
		t.Errorf("no batches: got %v, %v; want no results and no error", res, err)
	}
}
