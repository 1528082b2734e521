package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	imprint "github.com/imprint-dev/imprint"
)

// DefaultEpisodeIdle is how long an open episode may go without a new turn
// before FinalizeIdle closes it (session.episode_idle).
const DefaultEpisodeIdle = 30 * time.Minute

// idleBatch is how many idle episodes FinalizeIdle reads at a time.
const idleBatch = 100

// ManagerConfig configures a Manager. Zero fields take their defaults.
type ManagerConfig struct {
	// EpisodeIdle is how long an open episode may go without a new turn
	// before FinalizeIdle finalizes it; default DefaultEpisodeIdle.
	EpisodeIdle time.Duration
}

// TurnRecorder records the text turns of a live session as L0 messages
// (cmd adapts record.Recorder to it). Messages carry ids; recording an id
// the session already has must be a no-op.
type TurnRecorder interface {
	RecordTurns(ctx context.Context, scope imprint.Scope, sessionID string, msgs []imprint.Message) error
}

// ManagerDeps are what a Manager works with. Store is required, and Ingest
// for End to queue extractions; Events, Recorder, Logger and Wake may be
// nil.
type ManagerDeps struct {
	Store imprint.ServiceStore
	// Events receives episode.started, episode.finalized and
	// episode.abandoned (imprint.EpisodeEvent payloads), each with the
	// episode's scope; nil publishes nothing.
	Events   imprint.Publisher
	Recorder TurnRecorder
	Logger   *slog.Logger
	// Wake, when set, is called after the manager enqueued a job, so the
	// scheduler polls at once (Scheduler.Wake).
	Wake func()
	// Ingest queues the extraction End forces (ingest.Due in the binary),
	// so it goes to the job engine the server runs, the one way an
	// extraction is queued. Without it End of a session with pending
	// messages fails with ErrUnavailable.
	Ingest imprint.Ingest
	// Redact replaces secrets in a text (redact.String in the binary);
	// appended turns are redacted before they are recorded or stored.
	// Nil keeps texts as given.
	Redact func(string) string
}

// Manager groups the turns of live sessions into episodes: turns go to the
// session's open episode (opened on demand), an episode closes by Finalize,
// End or FinalizeIdle, and closing one enqueues its capture job in the same
// transaction. It is safe for concurrent use.
type Manager struct {
	d   ManagerDeps
	cfg ManagerConfig
}

// NewManager returns a Manager over d with cfg's zero fields defaulted.
func NewManager(d ManagerDeps, cfg ManagerConfig) *Manager {
	if cfg.EpisodeIdle <= 0 {
		cfg.EpisodeIdle = DefaultEpisodeIdle
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Manager{d: d, cfg: cfg}
}

// EpisodeIdle returns the idle time after which FinalizeIdle closes an
// open episode.
func (m *Manager) EpisodeIdle() time.Duration { return m.cfg.EpisodeIdle }

// AppendTurns appends turns to the session's open episode, opening a new
// one (id imprint.NewID(), announced as imprint.EventEpisodeStarted) when the
// session has none, and returns the episode after the append, its Turns
// the turns added and TurnCount its number of turns (as the store's
// AppendTurns).
//
// A turn without a time gets its predecessor's in the call, else the time
// of the call. User and assistant turns with text are also recorded as L0
// messages through the Recorder, before the episode is written, with the
// turn's id as message id; such a turn without an id gets one derived from
// the scope, session, role, given time, content and its rank among
// identical id-less turns of the call, so posting the same turns again
// records nothing new and adds no turn twice. Tool and system turns and
// empty assistant turns keep their ids as given. Every text of the turns
// passes ManagerDeps.Redact before anything is recorded or stored.
//
// It returns an error of kind ErrInvalid, and writes nothing, for a missing
// session id or scope, no turns, or an unknown role (naming turns[i].role).
func (m *Manager) AppendTurns(ctx context.Context, scope imprint.Scope, sessionID string, turns []imprint.Turn) (imprint.Episode, error) {
	sessionID = strings.TrimSpace(sessionID)
	if err := imprint.ValidateID("session_id", sessionID); err != nil {
		return imprint.Episode{}, err
	}
	scope = scope.WithDefaults()
	if err := scope.Validate(); err != nil {
		return imprint.Episode{}, err
	}
	if len(turns) == 0 {
		return imprint.Episode{}, imprint.Invalidf("turns is required")
	}
	if err := imprint.ValidateTurns("", turns); err != nil {
		return imprint.Episode{}, err
	}
	now := imprint.Now()
	out := make([]imprint.Turn, len(turns))
	var msgs []imprint.Message
	ranks := map[string]int{}
	prev := imprint.Time{}
	for i, t := range turns {
		t.ID = strings.TrimSpace(t.ID)
		given := t.TS
		if t.TS.IsZero() {
			t.TS = prev
		}
		if t.TS.IsZero() {
			t.TS = now
		}
		prev = t.TS
		if (t.Role == imprint.RoleUser || t.Role == imprint.RoleAssistant) && strings.TrimSpace(t.Content) != "" {
			if t.ID == "" && given.IsZero() {
				// Nothing identifies this turn: the same text later ("ok")
				// is a new message, so it gets a fresh id and is never
				// mistaken for a repeat and lost.
				t.ID = "turn_" + imprint.NewID()
			}
			if t.ID == "" {
				key := imprint.MessageKey(scope, sessionID, t.Role, given, t.Content)
				t.ID = "turn_" + imprint.RankedID(key, ranks[key])
				ranks[key]++
			}
			msgs = append(msgs, imprint.Message{ID: t.ID, SessionID: sessionID, Scope: scope, Role: t.Role,
				Content: t.Content, Timestamp: t.TS, Speaker: t.Meta.Speaker})
		}
		out[i] = t
	}
	// Ids are derived from the texts as given (so a repeat post finds
	// them); nothing is written before the secrets are gone.
	if m.d.Redact != nil {
		out = imprint.RedactTurns(out, m.d.Redact)
		for k := range msgs {
			msgs[k].Content = m.d.Redact(msgs[k].Content)
		}
	}
	if m.d.Recorder != nil && len(msgs) > 0 {
		if err := m.d.Recorder.RecordTurns(ctx, scope, sessionID, msgs); err != nil {
			return imprint.Episode{}, fmt.Errorf("record turns of session %s: %w", sessionID, err)
		}
	}
	newID := imprint.NewID()
	ep, err := m.d.Store.AppendTurns(ctx, scope, sessionID, out, newID)
	if err != nil {
		return imprint.Episode{}, fmt.Errorf("append turns of session %s: %w", sessionID, err)
	}
	if ep.ID == newID {
		m.publish(ctx, imprint.EventEpisodeStarted, ep, "")
	}
	return ep, nil
}

// Finalize closes the session's open episode as closedBy (finalized when
// empty) and enqueues its capture job in the same transaction, then
// publishes imprint.EventEpisodeFinalized and, for an abandoned episode,
// imprint.EventEpisodeAbandoned. It returns the closed episode; an error of kind
// ErrNotFound when the session has no open episode, ErrInvalid for an
// unknown closedBy.
func (m *Manager) Finalize(ctx context.Context, scope imprint.Scope, sessionID string, closedBy imprint.ClosedBy) (imprint.Episode, error) {
	if closedBy == "" {
		closedBy = imprint.ClosedFinalized
	}
	if closedBy != imprint.ClosedFinalized && closedBy != imprint.ClosedAbandoned {
		return imprint.Episode{}, imprint.Invalidf("closed_by %q is not finalized or abandoned", closedBy)
	}
	scope = scope.WithDefaults()
	ep, err := m.d.Store.OpenEpisode(ctx, scope, strings.TrimSpace(sessionID))
	if err != nil {
		return imprint.Episode{}, fmt.Errorf("finalize session %s: %w", sessionID, err)
	}
	closed, err := m.close(ctx, ep, closedBy)
	if errors.Is(err, imprint.ErrConflict) {
		// Closed by someone else between the read and the close.
		return imprint.Episode{}, imprint.NotFoundf("session %q has no open episode", sessionID)
	}
	if err != nil {
		return imprint.Episode{}, fmt.Errorf("finalize session %s: %w", sessionID, err)
	}
	return closed, nil
}

// close closes ep with its capture job and announces it.
func (m *Manager) close(ctx context.Context, ep imprint.Episode, closedBy imprint.ClosedBy) (imprint.Episode, error) {
	job := &imprint.Job{Kind: imprint.JobCapture, Scope: ep.Scope, SessionID: ep.SessionID, EpisodeID: ep.ID,
		UniqueKey: imprint.CaptureJobKey(ep.Scope, ep.ID)}
	closed, err := m.d.Store.CloseEpisode(ctx, ep.Scope, ep.ID, closedBy, job)
	if err != nil {
		return imprint.Episode{}, err
	}
	m.wake()
	m.publish(ctx, imprint.EventEpisodeFinalized, closed, closedBy)
	if closedBy == imprint.ClosedAbandoned {
		m.publish(ctx, imprint.EventEpisodeAbandoned, closed, closedBy)
	}
	return closed, nil
}

// End ends a session: it finalizes the open episode if there is one, then,
// when messages are pending, enqueues an extraction job for the session
// (unique per session, so it joins one already queued). It returns the id
// of the episode it finalized (nil when none was open) and the number of
// pending messages.
func (m *Manager) End(ctx context.Context, scope imprint.Scope, sessionID string) (episodeID *string, pending int, err error) {
	sessionID = strings.TrimSpace(sessionID)
	if sessionID == "" {
		return nil, 0, imprint.Invalidf("session_id is required")
	}
	scope = scope.WithDefaults()
	if err := scope.Validate(); err != nil {
		return nil, 0, err
	}
	ep, err := m.Finalize(ctx, scope, sessionID, imprint.ClosedFinalized)
	switch {
	case err == nil:
		id := ep.ID
		episodeID = &id
	case errors.Is(err, imprint.ErrNotFound):
	default:
		return nil, 0, fmt.Errorf("end session %s: %w", sessionID, err)
	}
	pending, err = m.d.Store.CountPending(ctx, scope, sessionID)
	if err != nil {
		return episodeID, 0, fmt.Errorf("end session %s: %w", sessionID, err)
	}
	if pending > 0 {
		if err := m.extract(ctx, scope, sessionID); err != nil {
			return episodeID, pending, fmt.Errorf("end session %s: enqueue extraction: %w", sessionID, err)
		}
	}
	return episodeID, pending, nil
}

// extract queues the extraction of the session's pending messages through
// Ingest, joining one already queued.
func (m *Manager) extract(ctx context.Context, scope imprint.Scope, sessionID string) error {
	if m.d.Ingest == nil {
		return fmt.Errorf("%w: no ingest to queue the extraction of session %s", imprint.ErrUnavailable, sessionID)
	}
	return m.d.Ingest.ExtractSession(ctx, scope, sessionID)
}

// FinalizeIdle finalizes, with their capture jobs, the open episodes of all
// scopes that got no turn for EpisodeIdle before now, and returns how many
// it closed. An episode closed meanwhile by another caller is skipped.
func (m *Manager) FinalizeIdle(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-m.cfg.EpisodeIdle)
	n := 0
	for range 1000 {
		eps, err := m.d.Store.IdleEpisodes(ctx, cutoff, idleBatch)
		if err != nil {
			return n, fmt.Errorf("finalize idle episodes: %w", err)
		}
		for _, ep := range eps {
			_, err := m.close(ctx, ep, imprint.ClosedFinalized)
			if errors.Is(err, imprint.ErrConflict) || errors.Is(err, imprint.ErrNotFound) {
				continue
			}
			if err != nil {
				return n, fmt.Errorf("finalize idle episode %s: %w", ep.ID, err)
			}
			n++
			m.d.Logger.Debug("episode finalized after idle", "episode_id", ep.ID, "session_id", ep.SessionID)
		}
		if len(eps) < idleBatch {
			break
		}
	}
	return n, nil
}

// publish announces an episode event with the episode's scope.
func (m *Manager) publish(ctx context.Context, typ string, ep imprint.Episode, closedBy imprint.ClosedBy) {
	if m.d.Events != nil {
		m.d.Events.Publish(ctx, imprint.Event{Type: typ, Scope: ep.Scope, Payload: imprint.EpisodeEvent{Episode: ep, ClosedBy: closedBy}})
	}
}

func (m *Manager) wake() {
	if m.d.Wake != nil {
		m.d.Wake()
	}
}
