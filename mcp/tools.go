package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/wire"
)

// Bounds of the tools' arguments.
const (
	// MaxLimit is the most records a search or listing returns.
	MaxLimit = 100
	// DefaultListLimit is the number of records a listing returns when
	// its call names none.
	DefaultListLimit = 20
	// MaxRecallBudget is the largest token budget a recall may ask for.
	MaxRecallBudget = 32000
	// MaxMessages is the most messages one record_messages call carries
	// (server.max_turns_per_request's default).
	MaxMessages = 1000
)

// toolSpec is one tool: its name, description, annotations and what it
// runs.
type toolSpec[In, Out any] struct {
	name, title, desc string
	// readOnly, destructive and idempotent are the annotations' hints.
	readOnly, destructive, idempotent bool
	// enums are the values each enumerated argument may take.
	enums map[string][]any
	run   func(ctx context.Context, c call, in In) (Out, error)
}

// addTool registers t with schemas inferred from In and Out. A tool that
// writes is refused to a read-only caller; every error comes back as a
// tool error ("<code>: <message>", naming the argument when it is one),
// never as a protocol failure.
func addTool[In, Out any](s *Server, t toolSpec[In, Out]) error {
	in, err := schemaFor[In](t.enums)
	if err != nil {
		return err
	}
	out, err := schemaFor[Out](nil)
	if err != nil {
		return err
	}
	destructive, openWorld := t.destructive, false
	tool := &sdk.Tool{
		Name: t.name, Title: t.title, Description: t.desc, InputSchema: in, OutputSchema: out,
		Annotations: &sdk.ToolAnnotations{Title: t.title, ReadOnlyHint: t.readOnly, DestructiveHint: &destructive,
			IdempotentHint: t.idempotent, OpenWorldHint: &openWorld},
	}
	sdk.AddTool(s.sdk, tool, func(ctx context.Context, req *sdk.CallToolRequest, arg In) (*sdk.CallToolResult, Out, error) {
		var zero Out
		if s.needRoots(req.Session) {
			if len(req.Params.InputResponses) == 0 {
				// The workspace comes first: ask the client for its roots
				// (a multi round-trip request; the SDK asks older clients
				// itself and calls again with the answer).
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{rootsRequest: &sdk.ListRootsParams{}}}, zero, nil
			}
			s.takeRoots(req.Session, req.Params.InputResponses)
		}
		c, err := s.callOf(req.Session)
		if err == nil && !t.readOnly && c.readOnly {
			err = imprint.Forbiddenf("api key %s is read-only: %s writes", c.keyID, t.name)
		}
		if err != nil {
			return nil, zero, s.toolError(t.name, err)
		}
		res, err := t.run(ctx, c, arg)
		if err != nil {
			return nil, zero, s.toolError(t.name, err)
		}
		return nil, res, nil
	})
	return nil
}

// toolError is err as the text of a tool error. Errors that are not the
// caller's (a store or model failure) are logged.
func (s *Server) toolError(tool string, err error) error {
	code := imprint.ErrorCode(err)
	switch code {
	case "invalid", "not_found", "conflict", "forbidden", "unauthorized", "too_large":
	default:
		s.log.Error("mcp tool failed", "tool", tool, "err", err)
	}
	return fmt.Errorf("%s: %w", code, err)
}

// errMissing is the tool error of a dependency the binary did not inject.
func errMissing(what string) error {
	return fmt.Errorf("this server has no %s: %w", what, imprint.ErrUnavailable)
}

func (s *Server) addTools() error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	add(addTool(s, toolSpec[searchIn, hitsOut]{
		name: "search", title: "Search memory",
		desc: "Hybrid keyword and vector search of the scope's memories, traces of past agent steps and recorded messages. " +
			"Each hit says where it comes from (session, episode, source messages).",
		readOnly: true, idempotent: true, enums: map[string][]any{"kind": {"all", "memory", "trace", "message"}},
		run: s.search,
	}))
	add(addTool(s, toolSpec[recallIn, imprint.RecallResult]{
		name: "recall", title: "Recall context",
		desc: "The context block to read before answering: the standing instructions, then the memories, traces and messages " +
			"relevant to the query, within a token budget. Without a query, the standing instructions only.",
		readOnly: true, idempotent: true,
		run: s.recall,
	}))
	add(addTool(s, toolSpec[listMemoriesIn, memoriesOut]{
		name: "list_memories", title: "List memories",
		desc:     "The scope's live memories, newest first, optionally of one type or one session.",
		readOnly: true, idempotent: true, enums: map[string][]any{"type": memoryTypes},
		run: s.listMemories,
	}))
	add(addTool(s, toolSpec[recordIn, imprint.RecordResult]{
		name: "record_messages", title: "Record messages",
		desc: "Record the conversation's messages (user and assistant turns) in a session, so memories are extracted from them " +
			"later or at end_session. A message id already recorded in the session is skipped, so pushing the same messages again adds nothing.",
		idempotent: true,
		run:        s.recordMessages,
	}))
	add(addTool(s, toolSpec[sessionIn, SessionEnd]{
		name: "end_session", title: "End session",
		desc:       "End a session: its open episode is closed and its pending messages are extracted into memories.",
		idempotent: true,
		run:        s.endSession,
	}))
	add(addTool(s, toolSpec[listTracesIn, tracesOut]{
		name: "list_traces", title: "List traces",
		desc: "Traces of past agent steps (what the user asked, what the agent did, its tool calls) with their reflections " +
			"and α (how much the step is worth learning from): those of one episode in step order, or those matching a query, best first.",
		readOnly: true, idempotent: true,
		run: s.listTraces,
	}))
	add(addTool(s, toolSpec[rememberIn, imprint.RememberResult]{
		name: "remember", title: "Remember",
		desc: "Keep a fact, preference or standing instruction the user wants remembered. It is deduplicated against what is " +
			"already known: the result says whether it was stored, was already there (skip), or updated or merged older memories.",
		idempotent: true, enums: map[string][]any{"type": memoryTypes},
		run: s.remember,
	}))
	add(addTool(s, toolSpec[forgetIn, forgetOut]{
		name: "forget", title: "Forget",
		desc: "Retire a memory: it is no longer searched, recalled or listed, but stays in its history. With purge, remove it " +
			"and all its versions everywhere instead (it cannot be recovered); only when the user asks for that.",
		destructive: true, idempotent: true,
		run: s.forget,
	}))
	add(addTool(s, toolSpec[idIn, imprint.MemoryDetail]{
		name: "get_memory", title: "Get memory",
		desc:     "One memory (live, superseded or forgotten) with its version history and the messages it was extracted from.",
		readOnly: true, idempotent: true,
		run: s.getMemory,
	}))
	return errors.Join(errs...)
}

type rememberIn struct {
	Text string `json:"text" jsonschema:"the fact to remember, in a sentence"`
	Type string `json:"type,omitempty" jsonschema:"persona (about the user), episodic (an event or decision) or instruction (a standing rule for the agent); inferred when absent"`
}

func (s *Server) remember(ctx context.Context, c call, in rememberIn) (imprint.RememberResult, error) {
	if strings.TrimSpace(in.Text) == "" {
		return imprint.RememberResult{}, imprint.Invalidf("text: must not be empty")
	}
	t := imprint.MemoryType(strings.TrimSpace(in.Type))
	if t != "" && !t.Valid() {
		return imprint.RememberResult{}, imprint.Invalidf("type: must be persona, episodic or instruction, got %q", in.Type)
	}
	if s.d.Memories == nil {
		return imprint.RememberResult{}, errMissing("memory management")
	}
	return s.d.Memories.Remember(ctx, imprint.RememberRequest{Scope: c.scope, Content: in.Text, Type: t, Workspace: c.workspace})
}

type forgetIn struct {
	ID          string `json:"id" jsonschema:"the memory to forget"`
	Purge       bool   `json:"purge,omitempty" jsonschema:"remove it and all its versions for good instead of retiring it (only when the user asks)"`
	WithSources bool   `json:"with_sources,omitempty" jsonschema:"with purge, also remove the messages it was extracted from"`
}

// forgetOut is what forget did: the retired memory, or what a purge
// removed.
type forgetOut struct {
	Action string               `json:"action" jsonschema:"forget or purge"`
	Memory *imprint.Memory      `json:"memory" jsonschema:"the retired memory (forget)"`
	Purged *imprint.PurgeResult `json:"purged" jsonschema:"what the purge removed (purge)"`
}

func (s *Server) forget(ctx context.Context, c call, in forgetIn) (forgetOut, error) {
	id := strings.TrimSpace(in.ID)
	if err := imprint.ValidateID("id", id); err != nil {
		return forgetOut{}, err
	}
	if in.WithSources && !in.Purge {
		return forgetOut{}, imprint.Invalidf("with_sources: only with purge")
	}
	if s.d.Memories == nil {
		return forgetOut{}, errMissing("memory management")
	}
	if in.Purge {
		res, err := s.d.Memories.Purge(ctx, c.scope, id, imprint.PurgeOptions{WithSources: in.WithSources})
		if err != nil {
			return forgetOut{}, err
		}
		res.MemoryIDs, res.MessageIDs = nonNil(res.MemoryIDs), nonNil(res.MessageIDs)
		return forgetOut{Action: "purge", Purged: &res}, nil
	}
	m, err := s.d.Memories.Forget(ctx, c.scope, id)
	if err != nil {
		return forgetOut{}, err
	}
	return forgetOut{Action: "forget", Memory: &m}, nil
}

type idIn struct {
	ID string `json:"id" jsonschema:"the memory's id"`
}

func (s *Server) getMemory(ctx context.Context, c call, in idIn) (imprint.MemoryDetail, error) {
	id := strings.TrimSpace(in.ID)
	if err := imprint.ValidateID("id", id); err != nil {
		return imprint.MemoryDetail{}, err
	}
	if s.d.Memories == nil {
		return imprint.MemoryDetail{}, errMissing("memory management")
	}
	d, err := s.d.Memories.Show(ctx, c.scope, id)
	if err != nil {
		return imprint.MemoryDetail{}, err
	}
	d.History, d.Sources = nonNil(d.History), nonNil(d.Sources)
	return d, nil
}

var memoryTypes = []any{string(imprint.MemoryPersona), string(imprint.MemoryEpisodic), string(imprint.MemoryInstruction)}

type searchIn struct {
	Query     string `json:"query" jsonschema:"what to look for: keywords or a question"`
	Kind      string `json:"kind,omitempty" jsonschema:"which records: memory, trace, message or all (default all)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most hits to return (default 10, at most 100)"`
	SessionID string `json:"session_id,omitempty" jsonschema:"only the records of this session"`
	Workspace string `json:"workspace,omitempty" jsonschema:"only the records of this workspace (project folder); every workspace when absent"`
}

type hitsOut struct {
	Hits []imprint.Hit `json:"hits"`
}

func (s *Server) search(ctx context.Context, c call, in searchIn) (hitsOut, error) {
	if strings.TrimSpace(in.Query) == "" {
		return hitsOut{}, imprint.Invalidf("query: must not be empty")
	}
	kinds, err := imprint.ParseKind(in.Kind)
	if err != nil {
		return hitsOut{}, err
	}
	limit, err := checkLimit("limit", in.Limit, imprint.DefaultSearchLimit)
	if err != nil {
		return hitsOut{}, err
	}
	if err := optionalID("session_id", in.SessionID); err != nil {
		return hitsOut{}, err
	}
	if err := optionalID("workspace", in.Workspace); err != nil {
		return hitsOut{}, err
	}
	if s.d.Search == nil {
		return hitsOut{}, errMissing("search")
	}
	hits, err := s.d.Search.Search(ctx, imprint.SearchQuery{Scope: c.scope, Text: in.Query, Kinds: kinds, SessionID: in.SessionID,
		Workspace: in.Workspace, Limit: limit})
	if err != nil {
		return hitsOut{}, err
	}
	return hitsOut{Hits: nonNil(hits)}, nil
}

type recallIn struct {
	Query        string `json:"query,omitempty" jsonschema:"what the agent is about to answer; empty recalls the standing instructions only"`
	SessionID    string `json:"session_id,omitempty" jsonschema:"the session the agent is in: its traces rank first"`
	BudgetTokens int    `json:"budget_tokens,omitempty" jsonschema:"token budget of the context block (default 800, at most 32000)"`
}

func (s *Server) recall(ctx context.Context, c call, in recallIn) (imprint.RecallResult, error) {
	if in.BudgetTokens < 0 || in.BudgetTokens > MaxRecallBudget {
		return imprint.RecallResult{}, imprint.Invalidf("budget_tokens: must be between 0 and %d, got %d", MaxRecallBudget, in.BudgetTokens)
	}
	if err := optionalID("session_id", in.SessionID); err != nil {
		return imprint.RecallResult{}, err
	}
	if s.d.Recall == nil {
		return imprint.RecallResult{}, errMissing("recall")
	}
	res, err := s.d.Recall.Recall(ctx, imprint.RecallQuery{Scope: c.scope, Text: in.Query, SessionID: in.SessionID,
		Workspace: c.workspace, BudgetTokens: in.BudgetTokens})
	if err != nil {
		return imprint.RecallResult{}, err
	}
	res.Hits = nonNil(res.Hits)
	return res, nil
}

type listMemoriesIn struct {
	Type      string `json:"type,omitempty" jsonschema:"only memories of this type: persona, episodic or instruction"`
	SessionID string `json:"session_id,omitempty" jsonschema:"only the memories extracted from this session"`
	Workspace string `json:"workspace,omitempty" jsonschema:"only the memories of this workspace (project folder); every workspace when absent"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most memories to return (default 20, at most 100)"`
}

type memoriesOut struct {
	Memories []imprint.Memory `json:"memories"`
}

func (s *Server) listMemories(ctx context.Context, c call, in listMemoriesIn) (memoriesOut, error) {
	f := imprint.MemoryFilter{SessionID: in.SessionID, Workspace: in.Workspace, Type: imprint.MemoryType(strings.TrimSpace(in.Type))}
	if f.Type != "" && !f.Type.Valid() {
		return memoriesOut{}, imprint.Invalidf("type: must be persona, episodic or instruction, got %q", in.Type)
	}
	if err := optionalID("session_id", in.SessionID); err != nil {
		return memoriesOut{}, err
	}
	if err := optionalID("workspace", in.Workspace); err != nil {
		return memoriesOut{}, err
	}
	var err error
	if f.Limit, err = checkLimit("limit", in.Limit, DefaultListLimit); err != nil {
		return memoriesOut{}, err
	}
	if s.d.Store == nil {
		return memoriesOut{}, errMissing("store")
	}
	ms, err := s.d.Store.ListMemories(ctx, c.scope, f)
	if err != nil {
		return memoriesOut{}, err
	}
	return memoriesOut{Memories: nonNil(ms)}, nil
}

type messageIn struct {
	ID        string `json:"id,omitempty" jsonschema:"the message's id in the host; derived from its content when absent"`
	Role      string `json:"role" jsonschema:"user or assistant"`
	Content   string `json:"content" jsonschema:"the message's text"`
	Timestamp string `json:"timestamp,omitempty" jsonschema:"when it was said (RFC 3339); the time of recording when absent"`
}

type recordIn struct {
	SessionID string      `json:"session_id" jsonschema:"the host's conversation id"`
	Messages  []messageIn `json:"messages" jsonschema:"the messages to record, oldest first"`
}

func (s *Server) recordMessages(ctx context.Context, c call, in recordIn) (imprint.RecordResult, error) {
	if strings.TrimSpace(in.SessionID) == "" {
		return imprint.RecordResult{}, imprint.Invalidf("session_id: required")
	}
	if len(in.Messages) == 0 {
		return imprint.RecordResult{}, imprint.Invalidf("messages: at least one message is required")
	}
	if len(in.Messages) > MaxMessages {
		return imprint.RecordResult{}, fmt.Errorf("messages: %d messages, at most %d per call: %w", len(in.Messages), MaxMessages, imprint.ErrTooLarge)
	}
	// The §4.2 reader checks every field as the HTTP API and imprint
	// record do, naming it (messages[1].role).
	body, err := json.Marshal(map[string]any{"session_id": in.SessionID, "messages": in.Messages})
	if err != nil {
		return imprint.RecordResult{}, fmt.Errorf("record_messages: %w", err)
	}
	doc, err := wire.ReadMessageDoc(bytes.NewReader(body), "", in.SessionID)
	if err != nil {
		return imprint.RecordResult{}, err
	}
	if s.d.Recorder == nil {
		return imprint.RecordResult{}, errMissing("recorder")
	}
	for i := range doc.Messages {
		doc.Messages[i].Workspace = c.workspace
	}
	res, err := s.d.Recorder.Record(ctx, c.scope, doc.SessionID, doc.Messages)
	if err != nil {
		return imprint.RecordResult{}, err
	}
	if s.d.Ingest != nil {
		s.d.Ingest.MessagesRecorded(ctx, c.scope, imprint.Recorded{SessionID: doc.SessionID, Messages: res.RecordedCount,
			Unembedded: res.RecordedCount - res.VectorsWritten, ExtractionDue: res.SchedulerNotified})
	}
	res.MessageIDs, res.FilteredMessages, res.Skipped = nonNil(res.MessageIDs), nonNil(res.FilteredMessages), nonNil(res.Skipped)
	return res, nil
}

type sessionIn struct {
	SessionID string `json:"session_id" jsonschema:"the session to end"`
}

func (s *Server) endSession(ctx context.Context, c call, in sessionIn) (SessionEnd, error) {
	if err := imprint.ValidateID("session_id", strings.TrimSpace(in.SessionID)); err != nil {
		return SessionEnd{}, err
	}
	if s.d.Sessions == nil {
		return SessionEnd{}, errMissing("session manager")
	}
	return s.d.Sessions.EndSession(ctx, c.scope, strings.TrimSpace(in.SessionID))
}

type listTracesIn struct {
	EpisodeID string `json:"episode_id,omitempty" jsonschema:"the episode whose traces to list, in step order"`
	Query     string `json:"query,omitempty" jsonschema:"find the traces matching this text instead, best first"`
	SessionID string `json:"session_id,omitempty" jsonschema:"only the traces of this session"`
	Workspace string `json:"workspace,omitempty" jsonschema:"only the traces of this workspace (project folder); every workspace when absent"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most traces to return (default 20, at most 100)"`
}

type tracesOut struct {
	Traces []imprint.Trace `json:"traces"`
}

func (s *Server) listTraces(ctx context.Context, c call, in listTracesIn) (tracesOut, error) {
	if err := optionalID("episode_id", in.EpisodeID); err != nil {
		return tracesOut{}, err
	}
	if err := optionalID("session_id", in.SessionID); err != nil {
		return tracesOut{}, err
	}
	if err := optionalID("workspace", in.Workspace); err != nil {
		return tracesOut{}, err
	}
	limit, err := checkLimit("limit", in.Limit, DefaultListLimit)
	if err != nil {
		return tracesOut{}, err
	}
	if s.d.Store == nil {
		return tracesOut{}, errMissing("store")
	}
	// An episode not in scope is not found, not an empty list.
	if in.EpisodeID != "" {
		if _, err := s.d.Store.GetEpisode(ctx, c.scope, in.EpisodeID); err != nil {
			return tracesOut{}, fmt.Errorf("episode %s: %w", in.EpisodeID, err)
		}
	}
	if strings.TrimSpace(in.Query) == "" {
		ts, err := s.d.Store.ListTraces(ctx, c.scope, imprint.TraceFilter{EpisodeID: in.EpisodeID, SessionID: in.SessionID,
			Workspace: in.Workspace, Limit: limit})
		if err != nil {
			return tracesOut{}, err
		}
		return tracesOut{Traces: nonNil(ts)}, nil
	}
	if s.d.Search == nil {
		return tracesOut{}, errMissing("search")
	}
	hits, err := s.d.Search.Search(ctx, imprint.SearchQuery{Scope: c.scope, Text: in.Query, Kinds: []imprint.Kind{imprint.KindTrace},
		SessionID: in.SessionID, Workspace: in.Workspace, Limit: limit})
	if err != nil {
		return tracesOut{}, err
	}
	out := tracesOut{Traces: []imprint.Trace{}}
	for _, h := range hits {
		if in.EpisodeID != "" && (h.EpisodeID == nil || *h.EpisodeID != in.EpisodeID) {
			continue
		}
		t, err := s.d.Store.GetTrace(ctx, c.scope, h.ID)
		if errors.Is(err, imprint.ErrNotFound) {
			continue // removed since it was indexed
		}
		if err != nil {
			return tracesOut{}, err
		}
		out.Traces = append(out.Traces, t)
	}
	return out, nil
}

// checkLimit reads a limit argument: 0 is def, more than MaxLimit or
// negative is ErrInvalid naming it.
func checkLimit(name string, n, def int) (int, error) {
	switch {
	case n < 0 || n > MaxLimit:
		return 0, imprint.Invalidf("%s: must be between 1 and %d, got %d", name, MaxLimit, n)
	case n == 0:
		return def, nil
	}
	return n, nil
}

// optionalID checks an id argument that may be left out.
func optionalID(name, v string) error {
	if v == "" {
		return nil
	}
	return imprint.ValidateID(name, v)
}

// nonNil is s, or an empty slice for nil, so a list is [] in JSON.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
