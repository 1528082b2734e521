package extract

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// Warning reports something that went wrong in a window without failing it
// (a skipped memory, a failed dedup judge, a missing vector).
type Warning struct {
	Stage   string `json:"stage"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Decision actions, as the dedup judge names them and as counted in
// Result.Decisions.
const (
	ActionStore  = "store"
	ActionUpdate = "update"
	ActionMerge  = "merge"
	ActionSkip   = "skip"
)

// Decisions counts what happened to the memories of one window.
type Decisions struct {
	Store  int `json:"store"`
	Update int `json:"update"`
	Merge  int `json:"merge"`
	Skip   int `json:"skip"`
}

func (d *Decisions) add(action string) {
	switch action {
	case ActionStore:
		d.Store++
	case ActionUpdate:
		d.Update++
	case ActionMerge:
		d.Merge++
	case ActionSkip:
		d.Skip++
	}
}

// Result is the outcome of one extraction window (CONTRACTS §5.2). Success
// false means the window's messages stay pending: the cursor did not move.
type Result struct {
	Success        bool   `json:"success"`
	SessionID      string `json:"session_id"`
	ExtractedCount int    `json:"extracted_count"`
	// StoredCount is store + update + merge, the number of Records.
	StoredCount int `json:"stored_count"`
	// Records are the memories written by this window (new versions for
	// update and merge).
	Records       []imprint.Memory `json:"records"`
	SceneNames    []string         `json:"scene_names"`
	LastSceneName string           `json:"last_scene_name"`
	Decisions     Decisions        `json:"decisions"`
	// MessageIDs are the pending messages this window consumed.
	MessageIDs []string  `json:"message_ids"`
	Warnings   []Warning `json:"warnings"`
}

func newResult(sessionID string) Result {
	return Result{
		SessionID:  sessionID,
		Records:    []imprint.Memory{},
		SceneNames: []string{},
		MessageIDs: []string{},
		Warnings:   []Warning{},
	}
}

// maxWarningsPerCode bounds the warnings of one stage and code listed in a
// Result; the rest are counted in one summary warning, so a reply with
// thousands of bad memories does not make a result of thousands of lines.
const maxWarningsPerCode = 20

// capWarnings keeps the first maxWarningsPerCode warnings of each stage and
// code, in order, and appends for each code over the limit a warning of
// that stage and code saying how many were left out.
func capWarnings(ws []Warning) []Warning {
	type key struct{ stage, code string }
	seen := map[key]int{}
	out := ws[:0:0]
	var over []key
	for _, w := range ws {
		k := key{w.Stage, w.Code}
		seen[k]++
		switch n := seen[k]; {
		case n <= maxWarningsPerCode:
			out = append(out, w)
		case n == maxWarningsPerCode+1:
			over = append(over, k)
		}
	}
	for _, k := range over {
		out = append(out, Warning{Stage: k.stage, Code: k.code,
			Message: fmt.Sprintf("%d more %s warnings not listed", seen[k]-maxWarningsPerCode, k.code)})
	}
	if out == nil {
		out = []Warning{}
	}
	return out
}

// EventCounts reports the decisions of a window that succeeded, for the
// counters of the service that publishes it (imprint.EventCounter).
func (r Result) EventCounts() imprint.EventCounts {
	if !r.Success {
		return imprint.EventCounts{}
	}
	d := r.Decisions
	return imprint.EventCounts{Stored: d.Store, Updated: d.Update, Merged: d.Merge, Skipped: d.Skip}
}

func (r *Result) warn(stage, code, msg string) {
	r.Warnings = append(r.Warnings, Warning{Stage: stage, Code: code, Message: msg})
}

// windowMetrics are the timings and counts of one window for the
// l1_extraction metric.
type windowMetrics struct {
	start                     time.Time
	extractDur, dedupDur, all time.Duration
	inputCount                int
	extractor                 string
	judgeCalled               bool
}

// logMetric emits the l1_extraction metric as one structured log record.
func logMetric(ctx context.Context, log *slog.Logger, scope imprint.Scope, res Result, m windowMetrics) {
	byType := map[imprint.MemoryType]int{}
	for _, rec := range res.Records {
		byType[rec.Type]++
	}
	// Ids and counts only: a memory's content (and its scene name, made
	// from it) is what the user said, so it is logged at debug alone.
	type storedRecord struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	stored := make([]storedRecord, 0, len(res.Records))
	for _, rec := range res.Records {
		stored = append(stored, storedRecord{rec.ID, string(rec.Type)})
	}
	if log.Enabled(ctx, slog.LevelDebug) {
		for _, rec := range res.Records {
			log.LogAttrs(ctx, slog.LevelDebug, "l1_extraction memory", slog.String("id", rec.ID),
				slog.String("type", string(rec.Type)), slog.String("scene", rec.SceneName), slog.String("content", rec.Content))
		}
	}
	log.LogAttrs(ctx, slog.LevelInfo, "l1_extraction",
		slog.String("metric", "l1_extraction"),
		slog.String("scope", scope.String()),
		slog.String("session_id", res.SessionID),
		slog.Bool("success", res.Success),
		slog.String("extractor", m.extractor),
		slog.Int("input_message_count", m.inputCount),
		slog.Int("consumed_message_count", len(res.MessageIDs)),
		slog.Int("memories_extracted", res.ExtractedCount),
		slog.Int("memories_stored", res.StoredCount),
		slog.Group("memories_by_type",
			slog.Int("persona", byType[imprint.MemoryPersona]),
			slog.Int("episodic", byType[imprint.MemoryEpisodic]),
			slog.Int("instruction", byType[imprint.MemoryInstruction])),
		slog.Group("decisions",
			slog.Int("store", res.Decisions.Store),
			slog.Int("update", res.Decisions.Update),
			slog.Int("merge", res.Decisions.Merge),
			slog.Int("skip", res.Decisions.Skip)),
		slog.Bool("dedup_judge_called", m.judgeCalled),
		slog.Int("warnings", len(res.Warnings)),
		slog.Int64("extract_ms", m.extractDur.Milliseconds()),
		slog.Int64("dedup_ms", m.dedupDur.Milliseconds()),
		slog.Int64("total_ms", m.all.Milliseconds()),
		slog.Any("stored", stored),
	)
}
