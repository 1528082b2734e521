package record

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/config"
)

// DefaultEveryNRounds is the number of user rounds after which a session is
// marked due for extraction when Config.EveryNRounds is not set.
const DefaultEveryNRounds = 5

// Skip reasons reported in Result.Skipped.
const (
	// ReasonEmpty means the message had no text left after sanitizing.
	ReasonEmpty = "empty"
	// ReasonDuplicate means the id was already recorded for the session, or
	// appeared earlier in the same call.
	ReasonDuplicate = "duplicate"
)

// Deps are what a Recorder works with. Store is required; the others may be
// nil: without an Embedder no vectors are written, without Redact secrets
// are kept as given, without Conversations no day shards are written.
type Deps struct {
	Store    imprint.Store
	Embedder imprint.Embedder
	// Redact replaces secrets in a text (redact.String in the binary).
	Redact func(string) string
	// Conversations is the log of <data_dir>/conversations/ (a shard.Writer
	// in the binary).
	Conversations imprint.RecordLog
	Logger        *slog.Logger
}

// Config tunes a Recorder.
type Config struct {
	// EveryNRounds marks the session due for extraction once this many user
	// messages were recorded since its last successful extraction.
	// Zero or less means DefaultEveryNRounds.
	EveryNRounds int
}

// ConfigFrom returns the extraction.* key the recorder uses
// (extraction.every_n_rounds) as a Config.
func ConfigFrom(c config.ExtractionConfig) Config {
	return Config{EveryNRounds: c.EveryNRounds}
}

// Recorder records L0 messages. It is safe for concurrent use.
type Recorder struct {
	d     Deps
	cfg   Config
	now   func() time.Time
	group grouper
}

// NewRecorder returns a Recorder over d with cfg's defaults filled in.
func NewRecorder(d Deps, cfg Config) *Recorder {
	if cfg.EveryNRounds <= 0 {
		cfg.EveryNRounds = DefaultEveryNRounds
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Recorder{d: d, cfg: cfg, now: time.Now}
}

// Result is the L0 record result (CONTRACTS.md §5.3). It is the root's
// type, so that the HTTP API answers with it without importing the
// recorder.
type Result = imprint.RecordResult

// FilteredMessage is one recorded message as stored.
type FilteredMessage = imprint.FilteredMessage

// Skipped is one message that was not recorded, and why.
type Skipped = imprint.SkippedMessage

// conversationLine is one line of a conversations day shard (CONTRACTS.md §6).
type conversationLine struct {
	ID         string        `json:"id"`
	SessionID  string        `json:"session_id"`
	Scope      imprint.Scope `json:"scope"`
	Role       imprint.Role  `json:"role"`
	Content    string        `json:"content"`
	Timestamp  imprint.Time  `json:"timestamp"`
	RecordedAt imprint.Time  `json:"recorded_at"`
	Speaker    string        `json:"speaker,omitempty"`
	Workspace  string        `json:"workspace,omitempty"`
}

// Record records msgs as L0 messages of the session, in order.
//
// Each message is sanitized (Sanitize), then redacted. A message without an
// id gets one derived from the scope, session, role, timestamp (when given)
// and sanitized content, plus its rank among identical id-less messages of
// the call, so posting the same id-less messages again records nothing new.
// A message without a timestamp gets the time of the call. Messages empty
// after sanitizing, ids already recorded for the session and ids repeated
// within msgs are skipped with a reason. The rest are embedded in one
// Embedder call (a failure is logged and they are recorded without
// vectors), stored in one transaction, then appended to the conversations
// shard of the day they were recorded (a shard failure is logged; the store
// is the record). When the session has reached Config.EveryNRounds user
// rounds since its last extraction, it is durably marked due for extraction
// and SchedulerNotified is set. All of this is done before Record returns.
//
// Concurrent calls are committed together (group commit): a call that finds
// no commit in flight commits at once; calls arriving meanwhile queue and
// the next commit takes them all (up to 64), in arrival order, in one store
// transaction when the store is an imprint.BatchAppender (the due marking
// included) and with one shard write and sync per day file. Each call gets
// the Result it would have had if the calls had run one after another in
// that order; a call whose context ends before its commit fails alone.
//
// Record returns an error of kind ErrInvalid, and stores nothing, when the
// session id or scope is missing or a role is not user or assistant (the
// message names the field, e.g. messages[2].role); store errors are wrapped.
func (r *Recorder) Record(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) (Result, error) {
	return r.RecordSession(ctx, scope, Session{SessionID: sessionID, Messages: msgs})
}

// RecordSession is Record for the messages of s. When s.BetweenPeople is
// set and a message is left to store, the session is durably marked as a
// conversation between people (imprint.Session.BetweenPeople) before its
// messages are stored, so no extraction ever reads them unmarked; a
// failed marking fails the call and stores nothing.
func (r *Recorder) RecordSession(ctx context.Context, scope imprint.Scope, s Session) (Result, error) {
	res, c, err := r.prepare(ctx, scope, s, imprint.At(r.now()))
	if err != nil || c == nil {
		return res, err
	}
	r.embed(ctx, c.keep)
	r.group.do(c, r.commit)
	return c.result(res)
}

// Session is the messages of one session, for RecordSession and
// RecordMany.
type Session struct {
	SessionID string
	Messages  []imprint.Message
	// BetweenPeople marks the session as a conversation between people
	// (imprint.Session.BetweenPeople). False leaves the session's marker as
	// it is: a marked session stays marked.
	BetweenPeople bool
}

// RecordMany records the messages of several sessions of scope, as
// RecordSession would with one call per session in order, but embeds them in one
// Embedder call and commits them together: one store transaction and one
// shard write and sync per day file for up to 64 sessions (an importer's
// many small transcripts). It returns a Result per session. Nothing is
// stored when one session is invalid (ErrInvalid naming it, e.g.
// sessions[2]: messages[0].role ...). A store failure fails the sessions
// of the failed transaction; the first such error is returned, with the
// results of all sessions.
func (r *Recorder) RecordMany(ctx context.Context, scope imprint.Scope, sessions []Session) ([]Result, error) {
	now := imprint.At(r.now())
	out := make([]Result, len(sessions))
	calls := make([]*call, len(sessions))
	var live []*call
	var keep []imprint.Message
	for i, s := range sessions {
		res, c, err := r.prepare(ctx, scope, s, now)
		if err != nil {
			return nil, fmt.Errorf("sessions[%d]: %w", i, err)
		}
		out[i], calls[i] = res, c
		if c != nil {
			live = append(live, c)
			keep = append(keep, c.keep...)
		}
	}
	// One embedder call for all, its vectors copied back to each call.
	r.embed(ctx, keep)
	k := 0
	for _, c := range live {
		copy(c.keep, keep[k:k+len(c.keep)])
		k += len(c.keep)
	}
	r.group.doAll(live, r.commit)
	var first error
	for i, c := range calls {
		if c == nil {
			continue
		}
		res, err := c.result(out[i])
		out[i] = res
		if err != nil && first == nil {
			first = err
		}
	}
	return out, first
}

// prepare validates, sanitizes, redacts and identifies the messages of s
// as Record does. It returns the call to commit, or nil when nothing is
// left to record (res is then the whole result).
func (r *Recorder) prepare(ctx context.Context, scope imprint.Scope, s Session, now imprint.Time) (Result, *call, error) {
	sessionID, msgs := strings.TrimSpace(s.SessionID), s.Messages
	res := Result{SessionID: sessionID, MessageIDs: []string{}, FilteredMessages: []FilteredMessage{}, Skipped: []Skipped{}}
	if err := imprint.ValidateID("session_id", sessionID); err != nil {
		return res, nil, err
	}
	scope = scope.WithDefaults()
	if err := scope.Validate(); err != nil {
		return res, nil, err
	}
	for i, m := range msgs {
		if m.Role != imprint.RoleUser && m.Role != imprint.RoleAssistant {
			return res, nil, imprint.Invalidf("messages[%d].role must be \"user\" or \"assistant\", got %q", i, m.Role)
		}
		if err := imprint.CheckMessage(i, m); err != nil {
			return res, nil, err
		}
	}
	if r.d.Store == nil {
		return res, nil, fmt.Errorf("record: no store configured")
	}

	keep := make([]imprint.Message, 0, len(msgs))
	seen := make(map[string]bool, len(msgs))
	ranks := map[string]int{} // identical id-less messages seen so far
	for _, m := range msgs {
		content := Sanitize(m.Content)
		if r.d.Redact != nil && content != "" {
			content = strings.TrimSpace(r.d.Redact(content))
		}
		id := strings.TrimSpace(m.ID)
		if id == "" && m.Timestamp.IsZero() {
			// Nothing identifies this message: the same text later in the
			// conversation ("ok", "continue") is a new message, so it gets a
			// fresh id rather than being mistaken for a repeat and lost.
			id = "msg_" + imprint.NewID()
		}
		if id == "" {
			base := imprint.MessageKey(scope, sessionID, m.Role, m.Timestamp, content)
			id = "msg_" + imprint.RankedID(base, ranks[base])
			ranks[base]++
		}
		if content == "" {
			res.Skipped = append(res.Skipped, Skipped{ID: id, Reason: ReasonEmpty})
			continue
		}
		if seen[id] {
			res.Skipped = append(res.Skipped, Skipped{ID: id, Reason: ReasonDuplicate})
			continue
		}
		seen[id] = true
		ts := m.Timestamp
		if ts.IsZero() {
			ts = now
		}
		keep = append(keep, imprint.Message{
			ID:         id,
			SessionID:  sessionID,
			Scope:      scope,
			Role:       m.Role,
			Content:    content,
			Timestamp:  imprint.At(ts.Time),
			RecordedAt: now,
			Speaker:    m.Speaker,
			Workspace:  m.Workspace,
		})
	}
	if len(keep) == 0 {
		return res, nil, nil
	}
	return res, &call{ctx: ctx, scope: scope, sessionID: sessionID, keep: keep, betweenPeople: s.BetweenPeople, wake: make(chan bool, 1)}, nil
}

// result completes res with what the commit of c did.
func (c *call) result(res Result) (Result, error) {
	if c.err != nil {
		return res, fmt.Errorf("record messages: %w", c.err)
	}
	recorded := 0
	dupSkips := make([]Skipped, 0, len(c.keep)-len(c.inserted))
	for _, m := range c.keep {
		if !c.inserted[m.ID] {
			dupSkips = append(dupSkips, Skipped{ID: m.ID, Reason: ReasonDuplicate})
			continue
		}
		recorded++
		res.MessageIDs = append(res.MessageIDs, m.ID)
		res.FilteredMessages = append(res.FilteredMessages, FilteredMessage{ID: m.ID, Role: m.Role, Content: m.Content})
		if len(m.Vec) > 0 {
			res.VectorsWritten++
		}
	}
	res.Skipped = append(res.Skipped, dupSkips...)
	res.RecordedCount = recorded
	res.SchedulerNotified = c.notified
	return res, nil
}

// commit marks the sessions of the group's calls that are between people,
// then stores the calls, in order, in one transaction when the
// store is an imprint.BatchAppender (the due marking included), else with
// one AppendMessages per call; then it appends every recorded message of
// the group to the day shards with one write and sync per file, and, for
// a store without BatchAppender, marks due sessions one by one. Each call
// gets the result it would have had alone, after the calls before it.
func (r *Recorder) commit(group []*call) {
	live := make([]*call, 0, len(group))
	for _, c := range group {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			continue
		}
		if c.betweenPeople {
			// Before the messages: extraction must never read them as
			// a conversation with an assistant.
			if err := r.markBetweenPeople(c); err != nil {
				c.err = fmt.Errorf("mark session between people: %w", err)
				continue
			}
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	ba, batched := imprint.AsBatchAppender(r.d.Store)
	if batched {
		lanes := [][]*call{live}
		if _, ok := imprint.AsConcurrentWriter(r.d.Store); ok {
			lanes = splitLanes(live, appendLanes, minLaneMessages)
		}
		var wg sync.WaitGroup
		for _, l := range lanes[1:] {
			wg.Go(func() { r.appendBatches(ba, l) })
		}
		r.appendBatches(ba, lanes[0])
		wg.Wait()
	} else {
		for _, c := range live {
			c.ar, c.err = r.d.Store.AppendMessages(c.ctx, c.scope, c.sessionID, c.keep)
		}
	}

	var recorded []imprint.Message
	for _, c := range live {
		if c.err != nil {
			continue
		}
		c.inserted = make(map[string]bool, len(c.ar.Inserted))
		for _, id := range c.ar.Inserted {
			c.inserted[id] = true
		}
		for _, m := range c.keep {
			if c.inserted[m.ID] {
				recorded = append(recorded, m)
			}
		}
	}
	r.appendShard(recorded)

	for _, c := range live {
		if c.err != nil || len(c.ar.Inserted) == 0 || c.ar.Session.RoundsSinceExtraction < r.cfg.EveryNRounds {
			continue
		}
		if batched {
			// Marked in the append's transaction.
			c.notified = c.ar.Session.ExtractionDue
			continue
		}
		if err := r.d.Store.MarkExtractionDue(c.ctx, c.scope, c.sessionID, true); err != nil {
			// The messages are recorded; the idle trigger or the next
			// record call will mark the session again.
			r.d.Logger.Warn("record: mark extraction due failed", "session_id", c.sessionID, "error", err)
		} else {
			c.notified = true
		}
	}
}

// markBetweenPeople marks c's session between people unless a read shows
// it marked already: the read is cheaper than the write transaction every
// later call of a conversation would otherwise run, and skipping is safe
// because the marking is never undone.
func (r *Recorder) markBetweenPeople(c *call) error {
	if s, err := r.d.Store.GetSession(c.ctx, c.scope, c.sessionID); err == nil && s.BetweenPeople {
		return nil
	}
	return r.d.Store.MarkBetweenPeople(c.ctx, c.scope, c.sessionID)
}

// appendLanes is the most AppendMessageBatches calls a group is stored
// with at once on a store whose writes run concurrently, and
// minLaneMessages the fewest messages a lane of a split group has: the
// sessions of an import chunk (hundreds of messages) go to two
// transactions, whose rows the server inserts on two cores while the
// recorder encodes them; a smaller group is one transaction.
const (
	appendLanes     = 2
	minLaneMessages = 128
)

// splitLanes splits the calls into up to n lanes of at least least messages
// each, every session's calls in one lane and in their order, giving each
// session in turn to the lane with the fewest messages so far; one lane
// when they are too few.
func splitLanes(calls []*call, n, least int) [][]*call {
	total := 0
	for _, c := range calls {
		total += len(c.keep)
	}
	n = max(1, min(n, total/max(least, 1)))
	if n == 1 || len(calls) < 2 {
		return [][]*call{calls}
	}
	lanes := make([][]*call, n)
	sizes := make([]int, n)
	of := map[string]int{} // session key: its lane
	for _, c := range calls {
		k := c.scope.Tenant + "\x00" + c.scope.User + "\x00" + c.scope.Agent + "\x00" + c.sessionID
		l, seen := of[k]
		if !seen {
			l = 0
			for i := range sizes {
				if sizes[i] < sizes[l] {
					l = i
				}
			}
			of[k] = l
		}
		lanes[l] = append(lanes[l], c)
		sizes[l] += len(c.keep)
	}
	out := lanes[:0]
	for _, l := range lanes {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// appendBatches stores the calls in one AppendMessageBatches transaction.
// When it fails and there was more than one call, each call is stored again
// alone, with its own context, so that one call's failure (a cancelled
// context, say) fails only that call.
func (r *Recorder) appendBatches(ba imprint.BatchAppender, calls []*call) {
	batch := func(c *call) imprint.MessageBatch {
		return imprint.MessageBatch{Scope: c.scope, SessionID: c.sessionID, Messages: c.keep, MarkDueAt: r.cfg.EveryNRounds}
	}
	if len(calls) > 1 {
		batches := make([]imprint.MessageBatch, len(calls))
		for i, c := range calls {
			batches[i] = batch(c)
		}
		ars, err := ba.AppendMessageBatches(calls[0].ctx, batches)
		if err == nil && len(ars) == len(calls) {
			for i, c := range calls {
				c.ar = ars[i]
			}
			return
		}
		if err == nil {
			err = fmt.Errorf("store returned %d results for %d batches", len(ars), len(calls))
		}
		r.d.Logger.Warn("record: group append failed; appending its calls one by one", "calls", len(calls), "error", err)
	}
	for _, c := range calls {
		ars, err := ba.AppendMessageBatches(c.ctx, []imprint.MessageBatch{batch(c)})
		if err == nil && len(ars) != 1 {
			err = fmt.Errorf("store returned %d results for 1 batch", len(ars))
		}
		if err != nil {
			c.err = err
			continue
		}
		c.ar = ars[0]
	}
}

// embed sets the vectors of msgs with one Embedder call. A failure leaves
// them without vectors: recording never depends on the embedder.
func (r *Recorder) embed(ctx context.Context, msgs []imprint.Message) {
	if r.d.Embedder == nil {
		return
	}
	texts := make([]string, len(msgs))
	for i, m := range msgs {
		texts[i] = m.Content
	}
	vecs, err := r.d.Embedder.Embed(ctx, texts)
	if err == nil && len(vecs) != len(msgs) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(msgs))
	}
	if err != nil {
		r.d.Logger.Warn("record: embedding failed; messages recorded without vectors",
			"embedder", r.d.Embedder.Name(), "messages", len(msgs), "error", err)
		return
	}
	name := r.d.Embedder.Name()
	for i := range msgs {
		if len(vecs[i]) == 0 {
			continue
		}
		msgs[i].Vec = vecs[i]
		msgs[i].Embedder = name
	}
}

// appendShard writes the recorded messages to the conversations day shard
// of their recorded_at date.
func (r *Recorder) appendShard(msgs []imprint.Message) {
	if r.d.Conversations == nil {
		return
	}
	lines := make([]any, len(msgs))
	for i, m := range msgs {
		lines[i] = conversationLine{ID: m.ID, SessionID: m.SessionID, Scope: m.Scope, Role: m.Role,
			Content: m.Content, Timestamp: m.Timestamp, RecordedAt: m.RecordedAt, Speaker: m.Speaker, Workspace: m.Workspace}
	}
	if err := r.d.Conversations.Append(lines, func(i int) time.Time { return msgs[i].RecordedAt.Time }); err != nil {
		// The store committed and is the source of truth; failing the call
		// would make the client retry into duplicates and still lose the line.
		r.d.Logger.Error("record: conversations shard append failed", "messages", len(msgs), "error", err)
	}
}
