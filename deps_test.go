package imprint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The direction of imports (docs/architecture.md): root ← leaves ←
// pipelines ← ingest, and root ← leaves ← adapters; ingest and the
// adapters are siblings (ingest reads through importer only), both
// imported by wiring (node, cmd, eval). Every package of the module is in exactly
// one of these lists, named by its folder; a package in a subfolder
// belongs to its top folder's family (llm/openai is llm's).
var (
	// leaves are small libraries any package may use: they import only
	// the root and other leaves.
	leafPackages = []string{"config", "internal", "keyword", "llmjson", "promptguard", "redact", "storetest", "vector", "wire"}
	// pipelines are the domain's stages: they import the root, leaves and
	// other pipelines, never an adapter.
	pipelinePackages = []string{"capture", "curate", "extract", "record", "search", "session"}
	// orchestrators run pipelines together over the importer's readers
	// (ingest: imports, job handlers); they import no other adapter.
	orchestratorPackages = []string{"ingest"}
	// adapters are one technology each; they import only the root and
	// leaves: never a pipeline, an orchestrator or a sibling adapter.
	adapterPackages = []string{"embedding", "httpapi", "importer", "llm", "mcp", "postgres", "schedule", "shard", "sqlite", "viewer"}
	// wiring packages put everything together and may import anything:
	// node builds a node from its configuration, cmd/imprint parses flags
	// and prints, eval measures retrieval.
	wiringPackages = []string{"cmd", "eval", "node"}
)

// orchestratorMayImport are the adapters an orchestrator reads through.
var orchestratorMayImport = []string{"importer"}

const modulePath = "github.com/imprint-dev/imprint"

// TestImportDirection fails when a pipeline imports an adapter, an adapter
// imports a pipeline, an orchestrator or a sibling (directly or through
// another package), a leaf or the root imports more than it may, or a
// package is in none of the lists.
// Test files are not counted: a test may use real adapters.
func TestImportDirection(t *testing.T) {
	t.Parallel()
	imports := moduleImports(t)
	kind := map[string]string{"": "root"}
	for _, l := range []struct {
		kind  string
		names []string
	}{{"leaf", leafPackages}, {"pipeline", pipelinePackages}, {"orchestrator", orchestratorPackages}, {"adapter", adapterPackages}, {"wiring", wiringPackages}} {
		for _, n := range l.names {
			kind[n] = l.kind
		}
	}
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fam := family(p)
		k, ok := kind[fam]
		if !ok {
			t.Errorf("package %q is in none of the lists of deps_test.go: say whether it is a leaf, pipeline, adapter, ...", p)
			continue
		}
		deps := closure(imports, p)
		for _, d := range deps {
			dfam := family(d)
			dk := kind[dfam]
			if dfam == fam {
				continue
			}
			switch {
			case k == "root":
				t.Errorf("the root imports %s: it imports only the standard library", d)
			case k == "leaf" && dk != "root" && dk != "leaf":
				t.Errorf("leaf %s imports %s (%s): a leaf imports only the root and leaves", p, d, dk)
			case k == "pipeline" && (dk == "adapter" || dk == "orchestrator" || dk == "wiring"):
				t.Errorf("pipeline %s imports %s %s: a pipeline reaches adapters only through root interfaces", p, dk, d)
			case k == "orchestrator" && (dk == "adapter" && !slices.Contains(orchestratorMayImport, dfam) || dk == "wiring"):
				t.Errorf("orchestrator %s imports %s %s", p, dk, d)
			case k == "adapter" && dk != "root" && dk != "leaf":
				// Directly or through another package: an adapter that
				// needs a pipeline (or ingest) takes a root interface, or
				// one of its own, that cmd fills.
				t.Errorf("adapter %s imports %s %s: an adapter imports only the root and leaves; cmd wires it to pipelines and siblings", p, dk, d)
			}
		}
	}
	// Issue 12's own check: the HTTP API reaches no importer, pipeline of
	// capture or extraction, or store.
	for _, d := range closure(imports, "httpapi") {
		if slices.Contains([]string{"importer", "capture", "extract", "sqlite"}, family(d)) {
			t.Errorf("httpapi depends on %s", d)
		}
	}
}

// family is the top folder of a package path relative to the module ("" is
// the root).
func family(p string) string {
	f, _, _ := strings.Cut(p, "/")
	return f
}

// closure returns every module package p depends on, directly or not.
func closure(imports map[string][]string, p string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(q string) {
		for _, d := range imports[q] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(p)
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// moduleImports returns, for each package of the module (by folder
// relative to the root, "" for the root), the module packages its
// non-test files import.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, im := range f.Imports {
			ip, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			rel, ok := strings.CutPrefix(ip, modulePath)
			if !ok || (rel != "" && rel[0] != '/') {
				continue
			}
			rel = strings.TrimPrefix(rel, "/")
			if !slices.Contains(out[pkg], rel) {
				out[pkg] = append(out[pkg], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
