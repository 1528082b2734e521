package ingest

import (
	"context"
	"fmt"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
)

// embedRetryBatch is how many records of a kind one embedding call of the
// retry job covers; embedRetryRounds bounds the batches of a kind per job.
const (
	embedRetryBatch  = 64
	embedRetryRounds = 50
)

// EmbedJob is the embedding retry job of a scope: it gives the messages,
// live memories and (with capture.embed_traces) traces of the scope that
// were stored without a vector their vectors, batch after batch. A failed
// embedding call fails the job, which is retried with backoff; the records
// stay stored either way. Records with no text to embed are left as they
// are.
func (w *Workers) EmbedJob(ctx context.Context, j imprint.Job) error {
	if w.Store == nil || w.Embedder == nil {
		w.log().Debug("embed job: nothing can re-embed here", "scope", j.Scope.String())
		return nil
	}
	n, err := embedRetry(ctx, w.Store, w.Embedder, j.Scope, w.EmbedTraces)
	if n > 0 {
		w.log().Info("embed job: vectors filled in", "scope", j.Scope.String(), "records", n)
	}
	if err != nil {
		return fmt.Errorf("embed retry of %s: %w", j.Scope.String(), err)
	}
	return nil
}

// embedRetry fills in the vectors of the scope's records that have none
// and returns how many records it embedded.
func embedRetry(ctx context.Context, st imprint.Store, emb imprint.Embedder, scope imprint.Scope, traces bool) (int, error) {
	done := 0
	// Each kind: read a batch, embed its texts in one call, store; stop
	// when a batch is short or stored nothing new (records without text).
	for range embedRetryRounds {
		msgs, err := st.UnembeddedMessages(ctx, scope, embedRetryBatch)
		if err != nil || len(msgs) == 0 {
			if err != nil {
				return done, err
			}
			break
		}
		texts := make([]string, len(msgs))
		for i, m := range msgs {
			texts[i] = m.Content
		}
		vecs, err := embedTexts(ctx, emb, texts)
		if err != nil {
			return done, err
		}
		bySession := map[string]map[string][]float32{}
		for i, m := range msgs {
			if bySession[m.SessionID] == nil {
				bySession[m.SessionID] = map[string][]float32{}
			}
			bySession[m.SessionID][m.ID] = vecs[i]
		}
		for sid, vs := range bySession {
			if err := st.SetMessageVectors(ctx, scope, sid, vs, emb.Name()); err != nil {
				return done, err
			}
		}
		done += len(msgs)
		if len(msgs) < embedRetryBatch {
			break
		}
	}
	for range embedRetryRounds {
		mems, err := st.UnembeddedMemories(ctx, scope, embedRetryBatch)
		if err != nil || len(mems) == 0 {
			if err != nil {
				return done, err
			}
			break
		}
		texts := make([]string, len(mems))
		for i, m := range mems {
			texts[i] = m.Content
		}
		vecs, err := embedTexts(ctx, emb, texts)
		if err != nil {
			return done, err
		}
		for i, m := range mems {
			if err := st.SetMemoryVector(ctx, scope, m.ID, vecs[i], emb.Name()); err != nil {
				return done, err
			}
		}
		done += len(mems)
		if len(mems) < embedRetryBatch {
			break
		}
	}
	if !traces {
		return done, nil
	}
	for range embedRetryRounds {
		trs, err := st.UnembeddedTraces(ctx, scope, embedRetryBatch)
		if err != nil || len(trs) == 0 {
			if err != nil {
				return done, err
			}
			break
		}
		// The texts capture embeds: the step's state and its action.
		var texts []string
		type slot struct{ state, action int }
		slots := make([]slot, len(trs))
		for i, t := range trs {
			step := capture.Step{UserText: t.UserText, AgentText: t.AgentText, ToolCalls: t.ToolCalls}
			slots[i] = slot{-1, -1}
			if s := capture.StateText(step); s != "" {
				slots[i].state = len(texts)
				texts = append(texts, s)
			}
			if s := capture.ActionText(step); s != "" {
				slots[i].action = len(texts)
				texts = append(texts, s)
			}
		}
		if len(texts) == 0 {
			break
		}
		vecs, err := embedTexts(ctx, emb, texts)
		if err != nil {
			return done, err
		}
		stored := 0
		for i, t := range trs {
			var sum, act []float32
			if slots[i].state >= 0 {
				sum = vecs[slots[i].state]
			}
			if slots[i].action >= 0 {
				act = vecs[slots[i].action]
			}
			if len(sum) == 0 && len(act) == 0 {
				continue
			}
			if err := st.SetTraceVectors(ctx, scope, t.ID, sum, act, emb.Name()); err != nil {
				return done, err
			}
			stored++
		}
		done += stored
		if len(trs) < embedRetryBatch || stored == 0 {
			break
		}
	}
	return done, nil
}

// embedTexts embeds texts in one call and checks the count.
func embedTexts(ctx context.Context, emb imprint.Embedder, texts []string) ([][]float32, error) {
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed %d texts with %s: %w", len(texts), emb.Name(), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed %d texts with %s: got %d vectors", len(texts), emb.Name(), len(vecs))
	}
	return vecs, nil
}
