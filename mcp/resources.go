package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	imprint "github.com/imprint-dev/imprint"
)

// The resources' URIs.
const (
	MemoryURITemplate = "imprint://memory/{id}"
	TraceURITemplate  = "imprint://trace/{id}"
	InstructionsURI   = "imprint://instructions"
	memoryURIPrefix   = "imprint://memory/"
	traceURIPrefix    = "imprint://trace/"
)

// NoInstructions is the text of imprint://instructions when the scope has
// no standing instructions.
const NoInstructions = "No standing instructions."

// MemoryURI is the resource URI of the memory id.
func MemoryURI(id string) string { return memoryURIPrefix + url.PathEscape(id) }

// TraceURI is the resource URI of the trace id.
func TraceURI(id string) string { return traceURIPrefix + url.PathEscape(id) }

func (s *Server) addResources() {
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name: "memory", Title: "Memory", URITemplate: MemoryURITemplate, MIMEType: "application/json",
		Description: "One memory with its version history and source messages (JSON).",
	}, s.resource(memoryURIPrefix, s.readMemory))
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name: "trace", Title: "Trace", URITemplate: TraceURITemplate, MIMEType: "application/json",
		Description: "One trace of an agent step: what was asked, what was done, its tool calls, reflection and α (JSON).",
	}, s.resource(traceURIPrefix, s.readTrace))
	s.sdk.AddResource(&sdk.Resource{
		Name: "instructions", Title: "Standing instructions", URI: InstructionsURI, MIMEType: "text/plain",
		Description: "The scope's standing instructions, as the recall block lists them.",
	}, s.readInstructions)
}

// resource is the handler of a template prefix{id}: the id is unescaped
// and checked, the record read as JSON. A record not in the caller's scope
// is "resource not found", as a missing one.
func (s *Server) resource(prefix string, read func(ctx context.Context, c call, id string) (any, error)) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		id, err := url.PathUnescape(strings.TrimPrefix(uri, prefix))
		if err == nil {
			err = imprint.ValidateID("id", id)
		}
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", uri, err)}
		}
		c, err := s.callOf(req.Session)
		if err != nil {
			return nil, s.resourceError(uri, err)
		}
		v, err := read(ctx, c, id)
		if err != nil {
			return nil, s.resourceError(uri, err)
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", uri, err)
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	}
}

// resourceError maps err to the protocol error of a resource read.
func (s *Server) resourceError(uri string, err error) error {
	switch {
	case errors.Is(err, imprint.ErrNotFound):
		return sdk.ResourceNotFoundError(uri)
	case errors.Is(err, imprint.ErrInvalid):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", uri, err)}
	}
	s.log.Error("mcp resource read failed", "uri", uri, "err", err)
	return fmt.Errorf("%s: %s: %w", uri, imprint.ErrorCode(err), err)
}

func (s *Server) readTrace(ctx context.Context, c call, id string) (any, error) {
	if s.d.Store == nil {
		return nil, errMissing("store")
	}
	return s.d.Store.GetTrace(ctx, c.scope, id)
}

func (s *Server) readInstructions(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	c, err := s.callOf(req.Session)
	if err != nil {
		return nil, s.resourceError(InstructionsURI, err)
	}
	if s.d.Recall == nil {
		return nil, s.resourceError(InstructionsURI, errMissing("recall"))
	}
	// A recall without text is the standing instructions only.
	res, err := s.d.Recall.Recall(ctx, imprint.RecallQuery{Scope: c.scope, BudgetTokens: MaxRecallBudget})
	if err != nil {
		return nil, s.resourceError(InstructionsURI, err)
	}
	// The SDK omits an empty text, and a contents block without text is
	// neither text nor blob to a host (the TypeScript SDK rejects it).
	text := res.Context
	if strings.TrimSpace(text) == "" {
		text = NoInstructions
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: InstructionsURI, MIMEType: "text/plain", Text: text}}}, nil
}

// memoryDetail is a memory with the versions it supersedes.
type memoryDetail struct {
	imprint.Memory
	History []imprint.Memory `json:"history"`
}

func (s *Server) readMemory(ctx context.Context, c call, id string) (any, error) {
	if s.d.Memories != nil {
		d, err := s.d.Memories.Show(ctx, c.scope, id)
		if err != nil {
			return nil, err
		}
		d.History, d.Sources = nonNil(d.History), nonNil(d.Sources)
		return d, nil
	}
	if s.d.Store == nil {
		return nil, errMissing("store")
	}
	m, err := s.d.Store.GetMemory(ctx, c.scope, id)
	if err != nil {
		return nil, err
	}
	hist, err := s.d.Store.MemoryHistory(ctx, c.scope, id)
	if err != nil {
		return nil, err
	}
	return memoryDetail{Memory: m, History: nonNil(hist)}, nil
}
