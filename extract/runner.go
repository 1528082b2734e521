package extract

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
	"github.com/imprint-dev/imprint/extract/heuristic"
)

// Config holds the extraction settings (the extraction.* keys of
// CONTRACTS §1).
type Config struct {
	// MaxMessagesPerExtraction is the number of qualified new messages per
	// window.
	MaxMessagesPerExtraction int
	// MaxBackgroundMessages is the number of qualified context messages
	// shown before a window.
	MaxBackgroundMessages int
	// MaxMemoriesPerSession caps the memories kept from one extraction
	// call, the first ones in extraction order.
	MaxMemoriesPerSession int
	// EnableDedup turns the exact-text pre-check and the LLM judge on.
	EnableDedup bool
	// ConflictRecallTopK is the number of vector candidates per memory.
	ConflictRecallTopK int
	// LLMTimeout bounds each attempt of the extraction and judge calls.
	LLMTimeout time.Duration
	// RecallMinScore is the lowest cosine a vector candidate may have.
	RecallMinScore float64
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		MaxMessagesPerExtraction: 10,
		MaxBackgroundMessages:    5,
		MaxMemoriesPerSession:    10,
		EnableDedup:              true,
		ConflictRecallTopK:       5,
		LLMTimeout:               180 * time.Second,
		RecallMinScore:           0.5,
	}
}

// ConfigFrom returns the extraction.* keys a Runner uses as a Config.
func ConfigFrom(c config.ExtractionConfig) Config {
	return Config{
		MaxMessagesPerExtraction: c.MaxMessagesPerExtraction,
		MaxBackgroundMessages:    c.MaxBackgroundMessages,
		MaxMemoriesPerSession:    c.MaxMemoriesPerSession,
		EnableDedup:              c.EnableDedup,
		ConflictRecallTopK:       c.ConflictRecallTopK,
		LLMTimeout:               c.LLMTimeout,
		RecallMinScore:           c.RecallMinScore,
	}
}

// Deps are what a Runner works with.
type Deps struct {
	// Store is required.
	Store imprint.Store
	// LLM extracts and judges; nil runs the heuristic extractor and only
	// the exact-text dedup pre-check.
	LLM imprint.LLM
	// Embedder makes memory vectors and enables vector recall; nil is fine.
	Embedder imprint.Embedder
	// Records receives every memory change as a line of the records log
	// (shard.Writer in the binary), and its journal the in-flight markers;
	// nil writes none.
	Records imprint.RecordLog
	// Logger receives the l1_extraction metric and warnings; nil discards.
	Logger *slog.Logger
}

// Runner extracts memories from the pending messages of sessions, one
// window at a time. It is safe for concurrent use on different sessions;
// callers serialize work on one session.
type Runner struct {
	d   Deps
	cfg Config
	now func() time.Time
}

// NewRunner returns a Runner. Zero or negative sizes in cfg take their
// defaults.
func NewRunner(d Deps, cfg Config) *Runner {
	def := DefaultConfig()
	if cfg.MaxMessagesPerExtraction <= 0 {
		cfg.MaxMessagesPerExtraction = def.MaxMessagesPerExtraction
	}
	if cfg.MaxBackgroundMessages < 0 {
		cfg.MaxBackgroundMessages = 0
	}
	if cfg.MaxMemoriesPerSession <= 0 {
		cfg.MaxMemoriesPerSession = def.MaxMemoriesPerSession
	}
	if cfg.ConflictRecallTopK <= 0 {
		cfg.ConflictRecallTopK = def.ConflictRecallTopK
	}
	if cfg.LLMTimeout <= 0 {
		cfg.LLMTimeout = def.LLMTimeout
	}
	return &Runner{d: d, cfg: cfg, now: time.Now}
}

func (r *Runner) log() *slog.Logger {
	if r.d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.d.Logger
}

// ExtractNext processes the session's next window of pending messages and
// reports whether messages are still pending after it. With nothing
// pending it returns a successful Result with no MessageIDs. The session's
// cursor (and last scene name) moves only when the window succeeds; when
// the extraction call or the store fails, the Result has Success false,
// the messages stay pending, and the error says why (kinds
// imprint.ErrLLM* or imprint.ErrUnavailable).
func (r *Runner) ExtractNext(ctx context.Context, scope imprint.Scope, sessionID string) (Result, bool, error) {
	return r.extractNext(ctx, scope, sessionID, nil, true, true)
}

// sessionState is what a window needs to know of its session: its last
// scene name and whether it is a conversation between people.
type sessionState struct {
	// known is set once the state was read from the store.
	known  bool
	scene  string
	people bool
}

// extractNext is ExtractNext. When st is not nil and known, it is the
// session's state, known to the caller from the window before (so the
// session is not read again); when st is not nil and not known, the state
// read is put there. checkMore false skips the read that tells whether
// messages are left (more is then true after any window that consumed
// messages); settle false skips the recovery of interrupted windows of
// the session, done by the caller already.
func (r *Runner) extractNext(ctx context.Context, scope imprint.Scope, sessionID string, st *sessionState, checkMore, settle bool) (Result, bool, error) {
	start := r.now()
	scope = scope.WithDefaults()
	res := newResult(sessionID)
	met := windowMetrics{start: start, extractor: imprint.ExtractorLLM}
	if r.d.LLM == nil {
		met.extractor = imprint.ExtractorHeuristic
	}
	fail := func(stage string, err error) (Result, bool, error) {
		res.Success = false
		res.warn(stage, imprint.ErrorCode(err), err.Error())
		res.Warnings = capWarnings(res.Warnings)
		met.all = r.now().Sub(start)
		logMetric(ctx, r.log(), scope, res, met)
		return res, true, err
	}

	if st == nil {
		st = &sessionState{}
	}
	if !st.known {
		sess, err := r.d.Store.GetSession(ctx, scope, sessionID)
		switch {
		case err == nil:
			*st = sessionState{known: true, scene: sess.LastSceneName, people: sess.BetweenPeople}
		case errors.Is(err, imprint.ErrNotFound):
			*st = sessionState{known: true}
		default:
			return fail("window", fmt.Errorf("read session: %w", err))
		}
	}
	prevScene := st.scene
	res.LastSceneName = prevScene

	w, err := NextWindow(ctx, r.d.Store, scope, sessionID, r.cfg.MaxMessagesPerExtraction, r.cfg.MaxBackgroundMessages)
	if err != nil {
		return fail("window", err)
	}
	if len(w.Consumed) == 0 {
		res.Success = true
		return res, false, nil
	}
	if settle {
		// A window of this session interrupted by a crash between its log
		// and its store writes is settled before this one logs anything.
		if err := r.recoverInflight(ctx, map[string]bool{sessionKey(scope, sessionID): true}); err != nil {
			res.warn("records", "inflight_recovery_failed", err.Error())
		}
	}
	startWindow(&res, &met, w)

	var mems []imprint.Memory
	lastScene := prevScene
	if len(w.New) > 0 {
		t0 := r.now()
		mems, lastScene, err = r.extractWindow(ctx, scope, sessionID, *st, w, &res)
		met.extractDur = r.now().Sub(t0)
		if err != nil {
			return fail("extract", err)
		}
	}
	res.ExtractedCount = len(mems)
	res.LastSceneName = lastScene

	if len(mems) > 0 {
		r.embedAll(ctx, mems, &res)
		t0 := r.now()
		out := r.dedup(ctx, scope, mems)
		met.dedupDur, met.judgeCalled = r.now().Sub(t0), out.judgeCalled
		if out.refused != nil {
			// The budget refused the judge: the window waits, rather
			// than storing its memories unjudged.
			return fail("dedup", out.refused)
		}
		res.Warnings = append(res.Warnings, out.warnings...)
		b := newApplyBatch(scope, sessionID, met.extractor, r.now(), w)
		// The window's marker goes once its memories are stored (or
		// withdrawn) and the cursor has had its chance to move.
		defer func() { r.endInflight(b.marker, !b.unsettled) }()
		if err := r.apply(ctx, b, mems, out, &res); err != nil {
			return fail("persist", err)
		}
	}

	if err := r.d.Store.AdvanceCursor(ctx, scope, sessionID, w.LastSeq(), lastScene, r.now()); err != nil {
		return fail("persist", fmt.Errorf("advance cursor: %w", err))
	}
	res.Success = true
	res.Warnings = capWarnings(res.Warnings)
	more := true
	if checkMore {
		// Whether anything is left: one row, not a count of the remainder.
		next, err := r.d.Store.PendingMessages(ctx, scope, sessionID, 1)
		if err != nil {
			r.log().Warn("read pending messages", "session_id", sessionID, "error", err)
		}
		more = len(next) > 0
	}
	met.all = r.now().Sub(start)
	logMetric(ctx, r.log(), scope, res, met)
	return res, more, nil
}

// ExtractPending runs windows over the session's pending messages, oldest
// first, until none is pending, calling each (when not nil) with the
// result of every window that consumed messages. It stops at the first
// failed window, after passing its result to each, and returns its error.
func (r *Runner) ExtractPending(ctx context.Context, scope imprint.Scope, sessionID string, each func(Result)) error {
	// After the first window the last scene name is the one the window
	// before stored, and the loop ends at the first empty window rather
	// than asking after each one whether more is pending. Windows of the
	// session interrupted by a crash are recovered before the first window
	// only: the windows of this loop leave a marker behind only when they
	// fail, which ends the loop.
	var st sessionState
	for settle := true; ; settle = false {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, more, err := r.extractNext(ctx, scope, sessionID, &st, false, settle)
		if err == nil && res.Success {
			st.scene = res.LastSceneName
		} else {
			st.known = false
		}
		if (len(res.MessageIDs) > 0 || !res.Success) && each != nil {
			each(res)
		}
		if err != nil {
			return err
		}
		if !more || len(res.MessageIDs) == 0 {
			return nil
		}
	}
}

// startWindow notes in res and met the window about to be extracted: its
// messages and the ones the gate kept from the extractor.
func startWindow(res *Result, met *windowMetrics, w Window) {
	res.MessageIDs = w.MessageIDs()
	met.inputCount = len(w.New)
	for _, rej := range w.Rejected {
		res.warn("gate", rej.Reason, fmt.Sprintf("message %s not sent for extraction", rej.ID))
	}
}

// extractWindow runs the extractor (the LLM, else the heuristic one) over
// the new messages of w, the window of a session in state st (after its
// last scene), and returns its valid memories, with their ids, and its
// last scene name; the scene names and warnings go to res. Only the LLM
// call fails.
func (r *Runner) extractWindow(ctx context.Context, scope imprint.Scope, sessionID string, st sessionState, w Window, res *Result) ([]imprint.Memory, string, error) {
	prevScene := st.scene
	if len(w.New) == 0 {
		return nil, prevScene, nil
	}
	var cands []imprint.Candidate
	var names []string
	var lastScene string
	if r.d.LLM == nil {
		if st.people {
			cands = heuristic.ExtractBetweenPeople(w.New)
		} else {
			cands = heuristic.Extract(w.New)
		}
		names, lastScene = candidateScenes(cands, prevScene)
	} else {
		var warns []Warning
		var err error
		cands, names, lastScene, warns, err = r.callExtract(ctx, scope, st, w)
		if err != nil {
			return nil, prevScene, fmt.Errorf("extract memories: %w", err)
		}
		res.Warnings = append(res.Warnings, warns...)
	}
	res.SceneNames = append(res.SceneNames, names...)
	cands = r.dropUnsafe(ctx, scope, sessionID, cands, res)
	mems, warns := validate(cands, w.New, w.Background, r.cfg.MaxMemoriesPerSession)
	assignIDs(scope, sessionID, w, mems)
	// A memory holds for the workspace its session ran in ("always use
	// pnpm in this repo" stays in the repo).
	for i, ws := 0, w.Workspace(); i < len(mems); i++ {
		mems[i].Workspace = ws
	}
	res.Warnings = append(res.Warnings, warns...)
	return mems, lastScene, nil
}

// candidateScenes collects the scene names of heuristic candidates.
func candidateScenes(cands []imprint.Candidate, prev string) ([]string, string) {
	var names []string
	last := prev
	for _, c := range cands {
		if c.SceneName == "" {
			continue
		}
		last = c.SceneName
		if !contains(names, c.SceneName) {
			names = append(names, c.SceneName)
		}
	}
	return names, last
}

// embedAll embeds the batch's contents in one call and sets content
// hashes. An embedder failure leaves the memories without vectors, with a
// warning; dedup then recalls by keywords.
func (r *Runner) embedAll(ctx context.Context, mems []imprint.Memory, res *Result) {
	for i := range mems {
		mems[i].ContentHash = ContentHash(mems[i].Content)
	}
	if r.d.Embedder == nil {
		return
	}
	texts := make([]string, len(mems))
	for i, m := range mems {
		texts[i] = m.Content
	}
	vecs, err := r.d.Embedder.Embed(ctx, texts)
	if err == nil && len(vecs) != len(mems) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(mems))
	}
	if err != nil {
		res.warn("embed", imprint.ErrorCode(err), fmt.Sprintf("memories stored without vectors: %v", err))
		return
	}
	name := r.d.Embedder.Name()
	for i := range mems {
		mems[i].Vec, mems[i].Embedder = vecs[i], name
	}
}
