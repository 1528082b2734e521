package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/mcp"
)

// TestInstructionsEmpty: with no standing instructions the resource still
// carries a text (the SDK drops an empty one, and a contents block with
// neither text nor blob breaks the TypeScript SDK's readResource).
func TestInstructionsEmpty(t *testing.T) {
	t.Parallel()
	st := newStack(t)
	cs := st.connect(t, nil)
	r, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: mcp.InstructionsURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Contents) != 1 || r.Contents[0].Text == "" || r.Contents[0].Text != mcp.NoInstructions {
		t.Fatalf("instructions without any: %+v, want the text %q", r.Contents, mcp.NoInstructions)
	}
	b, err := json.Marshal(r.Contents[0])
	if err != nil || !strings.Contains(string(b), `"text":`) {
		t.Fatalf("contents on the wire %s %v: want a text field", b, err)
	}
}

func TestResources(t *testing.T) {
	t.Parallel()
	st := newStack(t)
	m := st.putMemory(t, "m-1", "ann prefers short answers", imprint.MemoryPersona)
	rule := st.putMemory(t, "m-rule", "Always answer in French.", imprint.MemoryInstruction)
	tr := st.putTrace(t, "ep-1", "deploy the site", "ran the deploy script", "the script needs the staging flag")
	other := st.scope
	st.scope = imprint.Scope{Tenant: "beta", User: "ann", Agent: "default"}
	st.putMemory(t, "m-beta", "beta's secret plan", imprint.MemoryEpisodic)
	st.putTrace(t, "ep-beta", "beta task", "beta action", "beta reflection")
	st.scope = other
	cs := st.connect(t, nil)
	ctx := context.Background()

	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tm := range tmpls.ResourceTemplates {
		got = append(got, tm.URITemplate)
	}
	if strings.Join(got, " ") != mcp.MemoryURITemplate+" "+mcp.TraceURITemplate && strings.Join(got, " ") != mcp.TraceURITemplate+" "+mcp.MemoryURITemplate {
		t.Errorf("resource templates %v", got)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != mcp.InstructionsURI {
		t.Fatalf("resources %+v %v, want %s", res, err, mcp.InstructionsURI)
	}

	read := func(uri string) (*sdk.ReadResourceResult, error) {
		return cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	}
	r, err := read(mcp.MemoryURI(m.ID))
	if err != nil {
		t.Fatal(err)
	}
	var md imprint.MemoryDetail
	if err := json.Unmarshal([]byte(r.Contents[0].Text), &md); err != nil || md.ID != m.ID || md.Content != m.Content || r.Contents[0].MIMEType != "application/json" {
		t.Fatalf("memory resource %s: %+v %v", r.Contents[0].Text, md, err)
	}
	r, err = read(mcp.TraceURI(tr.ID))
	if err != nil {
		t.Fatal(err)
	}
	var gt imprint.Trace
	if err := json.Unmarshal([]byte(r.Contents[0].Text), &gt); err != nil || gt.ID != tr.ID || gt.Reflection == nil || *gt.Reflection != *tr.Reflection {
		t.Fatalf("trace resource %s: %v", r.Contents[0].Text, err)
	}
	r, err = read(mcp.InstructionsURI)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Contents[0].Text, rule.Content) || strings.Contains(r.Contents[0].Text, m.Content) {
		t.Fatalf("instructions resource %q: want the rule only", r.Contents[0].Text)
	}

	for _, c := range []struct{ uri, want string }{
		{mcp.MemoryURI("no-such"), "not found"},
		{mcp.MemoryURI("m-beta"), "not found"},
		{mcp.TraceURI("tr-ep-beta"), "not found"},
		{mcp.TraceURI("tr-missing"), "not found"},
		{"imprint://memory/a%0Ab", "id"},
		{"imprint://nothing/x", "not found"},
	} {
		if _, err := read(c.uri); err == nil || !strings.Contains(strings.ToLower(err.Error()), c.want) {
			t.Errorf("read %s: %v, want an error saying %q", c.uri, err, c.want)
		}
	}
}
