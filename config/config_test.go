package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/imprint-dev/imprint"
)

// envMap returns a lookup over m, standing in for the process environment.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// load runs Load with env and, when dataDir is not "", --data-dir.
func load(t *testing.T, env map[string]string, file, dataDir string) (*Config, error) {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = t.TempDir()
	}
	return Load(Source{LookupEnv: envMap(env), File: file, DataDir: dataDir, DataDirSet: dataDir != ""})
}

func mustLoad(t *testing.T, env map[string]string, file, dataDir string) *Config {
	t.Helper()
	c, err := load(t, env, file, dataDir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func values(c *Config) map[string]string {
	out := map[string]string{}
	for _, k := range configKeys {
		out[k.name] = k.value(c)
	}
	return out
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfigDefaults checks every default against the table of CONTRACTS.md §1.
func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := mustLoad(t, nil, "", dir)
	want := map[string]string{
		"data_dir":                               dir,
		"store":                                  "sqlite",
		"llm.provider":                           "none",
		"llm.base_url":                           "",
		"llm.api_key":                            "",
		"llm.model":                              "",
		"llm.timeout":                            "45s",
		"llm.max_retries":                        "3",
		"llm.concurrency":                        "4",
		"llm.budget.calls_per_hour":              "0",
		"llm.budget.prompt_tokens_per_hour":      "0",
		"embedding.provider":                     "hash",
		"embedding.base_url":                     "",
		"embedding.api_key":                      "",
		"embedding.model":                        "",
		"embedding.dimensions":                   "384",
		"capture.max_text_chars":                 "4000",
		"capture.max_tool_output_chars":          "2000",
		"capture.embed_traces":                   "true",
		"capture.alpha_scoring":                  "true",
		"capture.synth_reflections":              "false",
		"capture.llm_concurrency":                "4",
		"capture.batch_mode":                     "auto",
		"capture.batch_threshold":                "12",
		"capture.reflection_context_mode":        "task",
		"capture.long_episode_reflect_mode":      "per_step",
		"capture.downstream_step_count":          "3",
		"capture.capture_abandoned":              "true",
		"extraction.max_messages_per_extraction": "10",
		"extraction.max_background_messages":     "5",
		"extraction.max_memories_per_session":    "10",
		"extraction.enable_dedup":                "true",
		"extraction.conflict_recall_top_k":       "5",
		"extraction.every_n_rounds":              "5",
		"extraction.idle":                        "10m",
		"extraction.llm_timeout":                 "3m",
		"extraction.recall_min_score":            "0.5",
		"jobs.engine":                            "river",
		"session.episode_idle":                   "30m",
		"server.addr":                            "127.0.0.1:8420",
		"server.request_timeout":                 "30s",
		"server.api_token":                       "",
		"server.allowed_hosts":                   "",
		"server.idle_timeout":                    "2m",
		"server.max_turns_per_request":           "1000",
	}
	if diff := cmp.Diff(want, values(c)); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if c.File != "" {
		t.Errorf("File = %q with no config file", c.File)
	}
}

func TestDefaultDataDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"xdg", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/imprint"},
		{"home", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/imprint"},
		{"env wins", map[string]string{"HOME": "/home/u", "IMPRINT_DATA_DIR": "/srv/imprint"}, "/srv/imprint"},
		{"tilde", map[string]string{"HOME": "/home/u", "IMPRINT_DATA_DIR": "~/mem"}, "/home/u/mem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, tt.env, "", "")
			if c.DataDir != tt.want {
				t.Errorf("DataDir = %q, want %q", c.DataDir, tt.want)
			}
		})
	}
}

const sampleYAML = `
llm:
  provider: openai
  model: gpt-file
  timeout: 20s
capture:
  batch_mode: per_episode
  downstream_step_count: 1
  synth_reflections: true
extraction:
  recall_min_score: 0.7
  idle: 2m
server:
  addr: 127.0.0.1:9999
`

func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeFile(t, dir, "custom.yaml", sampleYAML)

	t.Run("file overrides defaults", func(t *testing.T) {
		t.Parallel()
		c := mustLoad(t, nil, file, dir)
		got := values(c)
		for k, want := range map[string]string{
			"llm.provider": "openai", "llm.model": "gpt-file", "llm.timeout": "20s",
			"capture.batch_mode": "per_episode", "capture.downstream_step_count": "1",
			"capture.synth_reflections": "true", "extraction.recall_min_score": "0.7",
			"extraction.idle": "2m", "server.addr": "127.0.0.1:9999",
			// untouched keys keep their defaults
			"capture.batch_threshold": "12", "llm.base_url": DefaultOpenAIBaseURL,
		} {
			if got[k] != want {
				t.Errorf("%s = %q, want %q", k, got[k], want)
			}
		}
		if c.File != file {
			t.Errorf("File = %q, want %q", c.File, file)
		}
	})
	t.Run("env overrides file", func(t *testing.T) {
		t.Parallel()
		c := mustLoad(t, map[string]string{"IMPRINT_CAPTURE_BATCH_MODE": "per_step", "IMPRINT_LLM_MODEL": "gpt-env"}, file, dir)
		if c.Capture.BatchMode != "per_step" || c.LLM.Model != "gpt-env" {
			t.Errorf("batch_mode %q model %q, want env values", c.Capture.BatchMode, c.LLM.Model)
		}
		if c.LLM.Timeout != 20*time.Second {
			t.Errorf("llm.timeout = %s, want the file's 20s", c.LLM.Timeout)
		}
		if got := c.Source("capture.batch_mode"); got != "env IMPRINT_CAPTURE_BATCH_MODE" {
			t.Errorf("source = %q", got)
		}
	})
	t.Run("flag overrides env", func(t *testing.T) {
		t.Parallel()
		flagDir := t.TempDir()
		c := mustLoad(t, map[string]string{"IMPRINT_DATA_DIR": "/from/env"}, "", flagDir)
		if c.DataDir != flagDir {
			t.Errorf("DataDir = %q, want the flag's %q", c.DataDir, flagDir)
		}
	})
	t.Run("IMPRINT_CONFIG names the file", func(t *testing.T) {
		t.Parallel()
		c := mustLoad(t, map[string]string{"IMPRINT_CONFIG": file}, "", dir)
		if c.Capture.BatchMode != "per_episode" {
			t.Errorf("batch_mode = %q, want the file's", c.Capture.BatchMode)
		}
	})
	t.Run("data dir file is read when present", func(t *testing.T) {
		t.Parallel()
		dd := t.TempDir()
		writeFile(t, dd, "imprint.yaml", "capture:\n  batch_threshold: 30\n")
		c := mustLoad(t, nil, "", dd)
		if c.Capture.BatchThreshold != 30 {
			t.Errorf("batch_threshold = %d, want 30 from <data_dir>/imprint.yaml", c.Capture.BatchThreshold)
		}
	})
	t.Run("--config missing is an error", func(t *testing.T) {
		t.Parallel()
		_, err := load(t, nil, filepath.Join(dir, "nope.yaml"), dir)
		if !errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), "nope.yaml") {
			t.Errorf("err = %v, want invalid naming the file", err)
		}
	})
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		want []string // substrings of the error
	}{
		{name: "unknown nested key", yaml: "capture:\n  batch_mod: auto\n", want: []string{"unknown key capture.batch_mod", "line 2"}},
		{name: "unknown top key", yaml: "datadir: /x\n", want: []string{"unknown key datadir"}},
		{name: "unknown section", yaml: "cache:\n  size: 3\n", want: []string{"unknown key cache"}},
		{name: "section given a value", yaml: "llm: openai\n", want: []string{"llm must be a mapping"}},
		{name: "key given a mapping", yaml: "llm:\n  model:\n    name: x\n", want: []string{"llm.model must be a single value"}},
		{name: "bad enum in file", yaml: "capture:\n  batch_mode: sometimes\n", want: []string{"capture.batch_mode", "per_step, per_episode, auto", "sometimes"}},
		{name: "bad duration in file", yaml: "extraction:\n  idle: 10\n", want: []string{"extraction.idle", "duration"}},
		{name: "bad int in file", yaml: "capture:\n  batch_threshold: many\n", want: []string{"capture.batch_threshold", "integer"}},
		{name: "bad bool in file", yaml: "capture:\n  embed_traces: maybe\n", want: []string{"capture.embed_traces", "true or false"}},
		{name: "out of range", yaml: "capture:\n  downstream_step_count: 4\n", want: []string{"capture.downstream_step_count", "between 0 and 3"}},
		{name: "negative count", env: map[string]string{"IMPRINT_EXTRACTION_MAX_MESSAGES_PER_EXTRACTION": "0"}, want: []string{"extraction.max_messages_per_extraction", "IMPRINT_EXTRACTION_MAX_MESSAGES_PER_EXTRACTION"}},
		{name: "bad enum in env", env: map[string]string{"IMPRINT_LLM_PROVIDER": "gemini"}, want: []string{"llm.provider", "none, openai, anthropic", "IMPRINT_LLM_PROVIDER"}},
		{name: "bad duration in env", env: map[string]string{"IMPRINT_LLM_TIMEOUT": "soon"}, want: []string{"llm.timeout", "duration"}},
		{name: "zero duration", env: map[string]string{"IMPRINT_SESSION_EPISODE_IDLE": "0s"}, want: []string{"session.episode_idle", "positive"}},
		{name: "score out of range", env: map[string]string{"IMPRINT_EXTRACTION_RECALL_MIN_SCORE": "1.5"}, want: []string{"extraction.recall_min_score"}},
		{name: "model required", env: map[string]string{"IMPRINT_LLM_PROVIDER": "anthropic"}, want: []string{"llm.model is required", "IMPRINT_LLM_MODEL"}},
		{name: "embedding model required", env: map[string]string{"IMPRINT_EMBEDDING_PROVIDER": "openai"}, want: []string{"embedding.model is required"}},
		{name: "hash dimensions fixed", env: map[string]string{"IMPRINT_EMBEDDING_DIMENSIONS": "512"}, want: []string{"embedding.dimensions", "384"}},
		{name: "bad store", env: map[string]string{"IMPRINT_STORE": "mysql://x"}, want: []string{"store must be"}},
		{name: "bad base url", env: map[string]string{"IMPRINT_LLM_PROVIDER": "openai", "IMPRINT_LLM_MODEL": "m", "IMPRINT_LLM_BASE_URL": "localhost:11434"}, want: []string{"llm.base_url", "http"}},
		{name: "bad server addr", env: map[string]string{"IMPRINT_SERVER_ADDR": "8420"}, want: []string{"server.addr", "host:port"}},
		{name: "invalid yaml", yaml: "llm: [\n", want: []string{"config file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := ""
			if tt.yaml != "" {
				file = writeFile(t, dir, "imprint.yaml", tt.yaml)
			}
			_, err := load(t, tt.env, file, dir)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if !errors.Is(err, imprint.ErrInvalid) {
				t.Errorf("err = %v, want kind ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// sampleValue returns a valid value for k that differs from its default.
func sampleValue(t *testing.T, k configKey, def *Config) string {
	t.Helper()
	switch k.name {
	case "data_dir":
		return "/srv/imprint-test"
	case "store":
		return "postgres://imprint:pw@db/imprint"
	case "llm.base_url", "embedding.base_url":
		return "http://127.0.0.1:11434/v1"
	case "server.addr":
		return "0.0.0.0:9000"
	}
	if len(k.enum) > 0 {
		for _, v := range k.enum {
			if v != k.value(def) {
				return v
			}
		}
	}
	switch p := k.field(def).(type) {
	case *string:
		return "value-of-" + k.name
	case *[]string:
		return "a-of-" + k.name + ",b.example"
	case *int:
		if k.max != nil && float64(*p+1) > *k.max {
			return strconv.Itoa(*p - 1)
		}
		return strconv.Itoa(*p + 1)
	case *bool:
		return strconv.FormatBool(!*p)
	case *time.Duration:
		return formatDuration(*p + 7*time.Second)
	case *float64:
		return "0.25"
	}
	t.Fatalf("no sample for %s", k.name)
	return ""
}

// TestEveryKeyHasAnEnvName sets every key through its IMPRINT_* variable at
// once and checks that each one took effect.
func TestEveryKeyHasAnEnvName(t *testing.T) {
	t.Parallel()
	def := defaultConfig("/d")
	env := map[string]string{}
	want := map[string]string{}
	for _, k := range configKeys {
		v := sampleValue(t, k, def)
		env[EnvName(k.name)] = v
		want[k.name] = v
	}
	if env["IMPRINT_CAPTURE_BATCH_MODE"] == "" || env["IMPRINT_LLM_API_KEY"] == "" || env["IMPRINT_DATA_DIR"] == "" {
		t.Fatalf("env names are not IMPRINT_<DOTTED_PATH>: %v", env)
	}
	c := mustLoad(t, env, "", "")
	if diff := cmp.Diff(want, values(c)); diff != "" {
		t.Errorf("values set through the environment (-want +got):\n%s", diff)
	}
	for _, k := range configKeys {
		if got, w := c.Source(k.name), "env "+EnvName(k.name); got != w {
			t.Errorf("source of %s = %q, want %q", k.name, got, w)
		}
	}
}

func TestUnknownEnvIsIgnored(t *testing.T) {
	t.Parallel()
	if _, err := load(t, map[string]string{"IMPRINT_NO_SUCH_KEY": "1", "IMPRINT_TENANT": "acme"}, "", t.TempDir()); err != nil {
		t.Errorf("an IMPRINT_ variable naming no key failed: %v", err)
	}
}

func TestProviderFallbacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		env                       map[string]string
		provider, baseURL, apiKey string
	}{
		{
			name:     "never switch provider away from none",
			env:      map[string]string{"OPENAI_API_KEY": "sk-fallback", "OPENAI_BASE_URL": "http://x/v1", "ANTHROPIC_API_KEY": "ak"},
			provider: "none",
		},
		{
			name:     "openai reads OPENAI_*",
			env:      map[string]string{"IMPRINT_LLM_PROVIDER": "openai", "IMPRINT_LLM_MODEL": "m", "OPENAI_API_KEY": "sk-fallback", "OPENAI_BASE_URL": "http://x/v1"},
			provider: "openai", baseURL: "http://x/v1", apiKey: "sk-fallback",
		},
		{
			name:     "own keys win over OPENAI_*",
			env:      map[string]string{"IMPRINT_LLM_PROVIDER": "openai", "IMPRINT_LLM_MODEL": "m", "IMPRINT_LLM_API_KEY": "sk-own", "OPENAI_API_KEY": "sk-fallback", "IMPRINT_LLM_BASE_URL": "http://own/v1", "OPENAI_BASE_URL": "http://x/v1"},
			provider: "openai", baseURL: "http://own/v1", apiKey: "sk-own",
		},
		{
			name:     "openai default base url",
			env:      map[string]string{"IMPRINT_LLM_PROVIDER": "openai", "IMPRINT_LLM_MODEL": "m"},
			provider: "openai", baseURL: DefaultOpenAIBaseURL,
		},
		{
			name:     "anthropic reads ANTHROPIC_API_KEY only",
			env:      map[string]string{"IMPRINT_LLM_PROVIDER": "anthropic", "IMPRINT_LLM_MODEL": "m", "ANTHROPIC_API_KEY": "ak", "OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": "http://x/v1"},
			provider: "anthropic", baseURL: DefaultAnthropicBaseURL, apiKey: "ak",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, tt.env, "", t.TempDir())
			got := [3]string{c.LLM.Provider, c.LLM.BaseURL, c.LLM.APIKey}
			if want := [3]string{tt.provider, tt.baseURL, tt.apiKey}; got != want {
				t.Errorf("provider, base_url, api_key = %q, want %q", got, want)
			}
		})
	}
}

func TestCheckServe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8420", "", true},
		{"localhost:8420", "", true},
		{"[::1]:8420", "", true},
		{"0.0.0.0:8420", "", false},
		{":8420", "", false},
		{"10.0.0.5:80", "", false},
		{"0.0.0.0:8420", "s3cret-token", true},
	}
	for _, tt := range tests {
		c := defaultConfig("/d")
		c.Server.Addr, c.Server.APIToken = tt.addr, tt.token
		err := c.CheckServe(nil)
		if (err == nil) != tt.ok {
			t.Errorf("CheckServe(%q, token %q) = %v, want ok %v", tt.addr, tt.token, err, tt.ok)
		}
		if err != nil && (!errors.Is(err, imprint.ErrInvalid) || !strings.Contains(err.Error(), "server.api_token")) {
			t.Errorf("CheckServe(%q) = %v, want invalid naming server.api_token", tt.addr, err)
		}
	}
}

func TestMasking(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"short", "****"},
		{"sk-proj-abcdefgh1234", "****1234"},
	}
	for _, tt := range tests {
		if got := maskSecret(tt.in); got != tt.want {
			t.Errorf("maskSecret(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := MaskURL("postgres://imprint:hunter2@db:5432/x"); got != "postgres://imprint:****@db:5432/x" {
		t.Errorf("maskURL = %q", got)
	}
}

var update = flag.Bool("update", false, "rewrite docs/configuration.md's key table")

// configTable renders the key table of docs/configuration.md from configKeys.
func configTable() string {
	def := defaultConfig("")
	var b strings.Builder
	b.WriteString("| key | environment | default | meaning |\n| --- | --- | --- | --- |\n")
	for _, k := range configKeys {
		d := k.value(def)
		switch {
		case k.name == "data_dir":
			d = "`$XDG_DATA_HOME/imprint`, else `~/.local/share/imprint`"
		case k.name == "embedding.dimensions":
			d = "`384` for `hash`, else `0`"
		case d == "":
			d = "—"
		default:
			d = "`" + d + "`"
		}
		meaning := k.doc
		if len(k.enum) == 0 && k.min != nil {
			if k.max != nil {
				meaning += fmt.Sprintf(" (%g..%g)", *k.min, *k.max)
			} else {
				meaning += fmt.Sprintf(" (at least %g)", *k.min)
			}
		}
		if k.secret {
			meaning += "; secret, masked by `imprint doctor`"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", k.name, EnvName(k.name), d, meaning)
	}
	return b.String()
}

const (
	tableBegin = "<!-- keys:begin (generated by go test ./config -run TestDocsConfigTable -update) -->\n"
	tableEnd   = "<!-- keys:end -->"
)

// TestDocsConfigTable keeps docs/configuration.md true: its key table is the
// one configKeys renders (every key, its environment variable, its default).
func TestDocsConfigTable(t *testing.T) {
	path := filepath.Join("..", "docs", "configuration.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read docs: %v", err)
	}
	doc := string(data)
	begin, end := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no generated key table markers", path)
	}
	got := doc[begin+len(tableBegin) : end]
	want := configTable()
	if got == want {
		return
	}
	if *update {
		doc = doc[:begin+len(tableBegin)] + want + doc[end:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/configuration.md key table is stale; run go test ./config -run TestDocsConfigTable -update\n%s", cmp.Diff(want, got))
}

// TestDefaultsAreLoaded: Defaults is what Load gives with no file and no
// environment, but for the data dir.
func TestDefaultsAreLoaded(t *testing.T) {
	t.Parallel()
	values := func(c *Config) map[string]string {
		m := map[string]string{}
		for _, e := range c.Entries() {
			if e.Key != "data_dir" {
				m[e.Key] = e.Value
			}
		}
		return m
	}
	if diff := cmp.Diff(values(mustLoad(t, nil, "", t.TempDir())), values(Defaults())); diff != "" {
		t.Errorf("values (-Load +Defaults):\n%s", diff)
	}
}
