package curate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/capture"
	"github.com/imprint-dev/imprint/extract"
)

// ExportFormat names imprint's export in its header line.
const ExportFormat = "imprint-export"

// ExportVersion is the version of the export's line format.
const ExportVersion = 1

// Kinds of export lines (CONTRACTS §8 "Export").
const (
	LineHeader  = "header"
	LineSession = "session"
	LineMessage = "message"
	LineMemory  = "memory"
	LineEpisode = "episode"
	LineTrace   = "trace"
)

// ExportLine is one line of an export. Kind says which field is set.
type ExportLine struct {
	Kind string `json:"kind"`
	// Header fields.
	Format     string         `json:"format,omitempty"`
	Version    int            `json:"version,omitempty"`
	Scope      *imprint.Scope `json:"scope,omitempty"`
	ExportedAt *imprint.Time  `json:"exported_at,omitempty"`

	Session *imprint.Session `json:"session,omitempty"`
	// CursorMessageID is the last message the session's extraction
	// consumed ("" when none): a restore moves the cursor back onto it.
	CursorMessageID string           `json:"cursor_message_id,omitempty"`
	Message         *imprint.Message `json:"message,omitempty"`
	Memory          *imprint.Memory  `json:"memory,omitempty"`
	Episode         *imprint.Episode `json:"episode,omitempty"`
	Trace           *imprint.Trace   `json:"trace,omitempty"`
}

// ExportStats counts what an export wrote or a restore read.
type ExportStats struct {
	Sessions int `json:"sessions"`
	Messages int `json:"messages"`
	Memories int `json:"memories"`
	Episodes int `json:"episodes"`
	Traces   int `json:"traces"`
}

// exportPage is how many messages an export reads at a time.
const exportPage = 1000

// ExportOptions select what an export writes.
type ExportOptions struct {
	// Kinds are the kinds of records to write; empty writes all.
	Kinds []imprint.Kind
	// Workspace, when set, writes that workspace's records only (a
	// session's messages when the session is in it); "" writes every
	// workspace of the scope.
	Workspace string
}

// Export writes everything of scope that o selects to w
// as JSON lines: a header, then sessions and their messages oldest first,
// memories with every version (superseded and forgotten ones too) in an
// order where each comes after the versions it supersedes, and episodes
// each followed by its traces in step order. Vectors are left out (a
// restore embeds again). Store errors are wrapped.
func Export(ctx context.Context, st imprint.Store, scope imprint.Scope, o ExportOptions, w io.Writer) (ExportStats, error) {
	var stats ExportStats
	if err := scope.Validate(); err != nil {
		return stats, err
	}
	if err := imprint.ValidateWorkspace("workspace", o.Workspace); err != nil {
		return stats, err
	}
	kinds := o.Kinds
	if len(kinds) == 0 {
		kinds = []imprint.Kind{imprint.KindMemory, imprint.KindTrace, imprint.KindMessage}
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	now := imprint.Now()
	sc := scope
	if err := enc.Encode(ExportLine{Kind: LineHeader, Format: ExportFormat, Version: ExportVersion, Scope: &sc, ExportedAt: &now}); err != nil {
		return stats, err
	}
	for _, k := range kinds {
		var err error
		switch k {
		case imprint.KindMessage:
			err = exportMessages(ctx, st, scope, o.Workspace, enc, &stats)
		case imprint.KindMemory:
			err = exportMemories(ctx, st, scope, o.Workspace, enc, &stats)
		case imprint.KindTrace:
			err = exportTraces(ctx, st, scope, o.Workspace, enc, &stats)
		}
		if err != nil {
			return stats, fmt.Errorf("export %ss: %w", k, err)
		}
	}
	return stats, bw.Flush()
}

func exportMessages(ctx context.Context, st imprint.Store, scope imprint.Scope, workspace string, enc *json.Encoder, stats *ExportStats) error {
	sessions, err := st.ListSessions(ctx, scope)
	if err != nil {
		return err
	}
	for _, s := range sessions {
		if workspace != "" && s.Workspace != workspace {
			continue
		}
		var msgs []imprint.Message
		before := int64(math.MaxInt64)
		for {
			page, err := st.MessagesBefore(ctx, scope, s.ID, before, exportPage)
			if err != nil {
				return err
			}
			msgs = append(page, msgs...)
			if len(page) < exportPage {
				break
			}
			before = page[0].Seq
		}
		line := ExportLine{Kind: LineSession, Session: &s}
		for _, m := range msgs {
			if m.Seq <= s.Cursor {
				line.CursorMessageID = m.ID
			}
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
		stats.Sessions++
		for i := range msgs {
			if err := enc.Encode(ExportLine{Kind: LineMessage, Message: &msgs[i]}); err != nil {
				return err
			}
			stats.Messages++
		}
	}
	return nil
}

func exportMemories(ctx context.Context, st imprint.Store, scope imprint.Scope, workspace string, enc *json.Encoder, stats *ExportStats) error {
	ms, err := st.ListMemories(ctx, scope, imprint.MemoryFilter{Workspace: workspace, AllVersions: true, Limit: imprint.NoLimit})
	if err != nil {
		return err
	}
	slices.Reverse(ms) // oldest first
	byID := make(map[string]int, len(ms))
	for i, m := range ms {
		byID[m.ID] = i
	}
	done := make(map[string]bool, len(ms))
	var emit func(i int, depth int) error
	emit = func(i int, depth int) error {
		m := ms[i]
		if done[m.ID] || depth > 1024 {
			return nil
		}
		done[m.ID] = true
		for _, p := range m.Supersedes {
			if j, ok := byID[p]; ok {
				if err := emit(j, depth+1); err != nil {
					return err
				}
			}
		}
		stats.Memories++
		return enc.Encode(ExportLine{Kind: LineMemory, Memory: &m})
	}
	for i := range ms {
		if err := emit(i, 0); err != nil {
			return err
		}
	}
	return nil
}

func exportTraces(ctx context.Context, st imprint.Store, scope imprint.Scope, workspace string, enc *json.Encoder, stats *ExportStats) error {
	traces, err := st.ListTraces(ctx, scope, imprint.TraceFilter{Workspace: workspace, Limit: imprint.NoLimit})
	if err != nil {
		return err
	}
	current := ""
	for i := range traces {
		t := traces[i]
		if t.EpisodeID != current {
			current = t.EpisodeID
			ep, err := st.GetEpisode(ctx, scope, t.EpisodeID)
			if err != nil {
				return err
			}
			if err := enc.Encode(ExportLine{Kind: LineEpisode, Episode: &ep}); err != nil {
				return err
			}
			stats.Episodes++
		}
		if err := enc.Encode(ExportLine{Kind: LineTrace, Trace: &t}); err != nil {
			return err
		}
		stats.Traces++
	}
	return nil
}

// IsExport reports whether the file at path starts with an export's
// header line, so that `imprint import --format imprint` restores it.
func IsExport(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return false
	}
	var h ExportLine
	return json.Unmarshal(bytes.TrimSpace(line), &h) == nil && h.Kind == LineHeader && h.Format == ExportFormat
}

// RestoreDeps are what a restore writes to.
type RestoreDeps struct {
	Store imprint.Store
	// Embedder embeds restored messages and memories; nil stores them
	// without vectors.
	Embedder imprint.Embedder
	// Records and Conversations get the lines of the restored memories and
	// messages, so a rebuild from the shards finds them; nil logs none.
	Records, Conversations imprint.RecordLog
}

// restoreBatch is how many messages a restore appends at a time.
const restoreBatch = 500

// Restore reads an export (Export's lines) from r and writes it to the
// store with the same ids: sessions with their extraction cursors,
// messages, memories with their version history (forgotten ones stay
// forgotten) and episodes with their traces. Records of the export's own
// scope or any other are written in the scope each line names. Restoring
// into a store that holds some of them leaves those as they are (messages,
// traces) or rewrites them (memories). ErrInvalid for a line that is not
// an export line, naming its number; a first line that is not an export
// header is ErrInvalid too.
func Restore(ctx context.Context, d RestoreDeps, r io.Reader) (ExportStats, error) {
	var stats ExportStats
	rs := &restorer{d: d, stats: &stats, cursors: map[sessionKey]cursorAt{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := imprint.ValidateJSON(fmt.Sprintf("line %d", n), line); err != nil {
			return stats, err
		}
		var l ExportLine
		if err := json.Unmarshal(line, &l); err != nil {
			return stats, imprint.Invalidf("line %d: %v", n, err)
		}
		if n == 1 && (l.Kind != LineHeader || l.Format != ExportFormat) {
			return stats, imprint.Invalidf("line 1: not an imprint export (no %q header)", ExportFormat)
		}
		if err := rs.line(ctx, n, l); err != nil {
			return stats, err
		}
	}
	if err := sc.Err(); err != nil {
		return stats, fmt.Errorf("read export: %w", err)
	}
	if n == 0 {
		return stats, imprint.Invalidf("the export is empty")
	}
	if err := rs.flush(ctx); err != nil {
		return stats, err
	}
	return stats, rs.setCursors(ctx)
}

type sessionKey struct {
	scope imprint.Scope
	id    string
}

type cursorAt struct {
	messageID string
	session   imprint.Session
}

// restorer holds a restore's pending writes: the messages of the session
// being read, the episode whose traces are being read.
type restorer struct {
	d       RestoreDeps
	stats   *ExportStats
	msgs    []imprint.Message
	msgKey  sessionKey
	ep      *imprint.Episode
	traces  []imprint.Trace
	cursors map[sessionKey]cursorAt
}

func (rs *restorer) line(ctx context.Context, n int, l ExportLine) error {
	bad := func(field string) error { return imprint.Invalidf("line %d: a %s line without %s", n, l.Kind, field) }
	switch l.Kind {
	case LineHeader:
		if l.Version > ExportVersion {
			return imprint.Invalidf("line %d: export version %d is newer than this imprint reads (%d)", n, l.Version, ExportVersion)
		}
	case LineSession:
		if l.Session == nil {
			return bad("session")
		}
		s := *l.Session
		if s.BetweenPeople {
			if err := rs.d.Store.MarkBetweenPeople(ctx, s.Scope, s.ID); err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
		}
		rs.cursors[sessionKey{s.Scope, s.ID}] = cursorAt{messageID: l.CursorMessageID, session: s}
		rs.stats.Sessions++
	case LineMessage:
		if l.Message == nil {
			return bad("message")
		}
		m := *l.Message
		k := sessionKey{m.Scope, m.SessionID}
		if k != rs.msgKey || len(rs.msgs) >= restoreBatch {
			if err := rs.flushMessages(ctx); err != nil {
				return err
			}
			rs.msgKey = k
		}
		rs.msgs = append(rs.msgs, m)
	case LineMemory:
		if l.Memory == nil {
			return bad("memory")
		}
		if err := rs.memory(ctx, *l.Memory); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	case LineEpisode:
		if l.Episode == nil {
			return bad("episode")
		}
		if err := rs.flushEpisode(ctx); err != nil {
			return err
		}
		ep := *l.Episode
		rs.ep = &ep
	case LineTrace:
		if l.Trace == nil {
			return bad("trace")
		}
		if rs.ep == nil || l.Trace.EpisodeID != rs.ep.ID {
			return imprint.Invalidf("line %d: trace %s does not follow its episode %s", n, l.Trace.ID, l.Trace.EpisodeID)
		}
		rs.traces = append(rs.traces, *l.Trace)
	default:
		return imprint.Invalidf("line %d: unknown kind %q", n, l.Kind)
	}
	return nil
}

func (rs *restorer) flush(ctx context.Context) error {
	if err := rs.flushMessages(ctx); err != nil {
		return err
	}
	return rs.flushEpisode(ctx)
}

func (rs *restorer) flushMessages(ctx context.Context) error {
	if len(rs.msgs) == 0 {
		return nil
	}
	msgs := rs.msgs
	rs.msgs = nil
	embedder := ""
	if rs.d.Embedder != nil {
		texts := make([]string, len(msgs))
		for i, m := range msgs {
			texts[i] = m.Content
		}
		if vecs, err := rs.d.Embedder.Embed(ctx, texts); err == nil && len(vecs) == len(msgs) {
			embedder = rs.d.Embedder.Name()
			for i := range msgs {
				msgs[i].Vec, msgs[i].Embedder = vecs[i], embedder
			}
		}
	}
	res, err := rs.d.Store.AppendMessages(ctx, rs.msgKey.scope, rs.msgKey.id, msgs)
	if err != nil {
		return fmt.Errorf("restore messages of session %s: %w", rs.msgKey.id, err)
	}
	rs.stats.Messages += len(res.Inserted)
	if rs.d.Conversations != nil && len(res.Inserted) > 0 {
		inserted := map[string]bool{}
		for _, id := range res.Inserted {
			inserted[id] = true
		}
		var lines []any
		var days []time.Time
		for _, m := range msgs {
			if inserted[m.ID] {
				m.Vec, m.Embedder = nil, ""
				lines = append(lines, m)
				days = append(days, m.RecordedAt.Time)
			}
		}
		if err := rs.d.Conversations.Append(lines, func(i int) time.Time { return days[i] }); err != nil {
			return fmt.Errorf("restore: conversations log: %w", err)
		}
	}
	return nil
}

func (rs *restorer) flushEpisode(ctx context.Context) error {
	if rs.ep == nil {
		return nil
	}
	ep, traces := *rs.ep, rs.traces
	rs.ep, rs.traces = nil, nil
	embedTraces(ctx, rs.d.Embedder, traces)
	if err := rs.d.Store.SaveCapture(ctx, ep, traces); err != nil {
		return fmt.Errorf("restore episode %s: %w", ep.ID, err)
	}
	rs.stats.Episodes++
	rs.stats.Traces += len(traces)
	return nil
}

// memory writes one memory version: the versions it supersedes came
// before it in the export, so it supersedes those still live.
func (rs *restorer) memory(ctx context.Context, m imprint.Memory) error {
	var targets []string
	for _, id := range m.Supersedes {
		t, err := rs.d.Store.GetMemory(ctx, m.Scope, id)
		if err == nil && t.SupersededBy == nil {
			targets = append(targets, id)
		}
	}
	m.SupersededBy = nil
	m.ContentHash = extract.ContentHash(m.Content)
	m.Vec, m.Embedder = nil, ""
	if rs.d.Embedder != nil {
		if vecs, err := rs.d.Embedder.Embed(ctx, []string{m.Content}); err == nil && len(vecs) == 1 {
			m.Vec, m.Embedder = vecs[0], rs.d.Embedder.Name()
		}
	}
	if err := rs.d.Store.PutMemory(ctx, m, targets); err != nil {
		return fmt.Errorf("restore memory %s: %w", m.ID, err)
	}
	rs.stats.Memories++
	if rs.d.Records != nil {
		op := extract.OpLineStore
		if m.ForgottenAt != nil {
			op = imprint.OpLineForget
		}
		at := m.UpdatedAt
		if err := rs.d.Records.Append([]any{extract.RecordLine{Op: op, At: at, Memory: m}}, func(int) time.Time { return at.Time }); err != nil {
			return fmt.Errorf("restore: records log: %w", err)
		}
	}
	return nil
}

// setCursors moves each restored session's cursor back onto the message
// its extraction had consumed, so restored messages are not extracted
// again.
func (rs *restorer) setCursors(ctx context.Context) error {
	for k, c := range rs.cursors {
		if c.messageID == "" {
			continue
		}
		m, err := rs.d.Store.GetMessage(ctx, k.scope, k.id, c.messageID)
		if err != nil {
			return fmt.Errorf("restore cursor of session %s: %w", k.id, err)
		}
		if err := rs.d.Store.AdvanceCursor(ctx, k.scope, k.id, m.Seq, c.session.LastSceneName, c.session.LastExtractedAt.Time); err != nil {
			return fmt.Errorf("restore cursor of session %s: %w", k.id, err)
		}
	}
	return nil
}

// embedTraces gives traces the state and action vectors capture gives
// them, in one Embed call; when the embedder fails they stay without (the
// embedding retry of imprint serve fills them later).
func embedTraces(ctx context.Context, emb imprint.Embedder, traces []imprint.Trace) {
	if emb == nil || len(traces) == 0 {
		return
	}
	var texts []string
	idx := make([][2]int, len(traces))
	for i, t := range traces {
		step := capture.Step{UserText: t.UserText, AgentText: t.AgentText, ToolCalls: t.ToolCalls}
		idx[i] = [2]int{-1, -1}
		if s := capture.StateText(step); s != "" {
			idx[i][0] = len(texts)
			texts = append(texts, s)
		}
		if s := capture.ActionText(step); s != "" {
			idx[i][1] = len(texts)
			texts = append(texts, s)
		}
	}
	if len(texts) == 0 {
		return
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil || len(vecs) != len(texts) {
		return
	}
	for i := range traces {
		if j := idx[i][0]; j >= 0 {
			traces[i].VecSummary = vecs[j]
		}
		if j := idx[i][1]; j >= 0 {
			traces[i].VecAction = vecs[j]
		}
		traces[i].Embedder = emb.Name()
	}
}
