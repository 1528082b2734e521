package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/imprint-dev/imprint"
)

// Config is imprint's configuration (CONTRACTS.md §1). Every field is a key
// of configKeys; Load fills it from defaults, the config file, the
// environment and flags, in rising precedence.
type Config struct {
	// DataDir holds the SQLite file, JSONL shards and logs.
	DataDir string
	// Store is "sqlite" (the file <DataDir>/imprint.db) or a postgres:// URL.
	Store      string
	LLM        LLMConfig
	Embedding  EmbeddingConfig
	Capture    CaptureConfig
	Extraction ExtractionConfig
	Session    SessionConfig
	Server     ServerConfig
	Jobs       JobsConfig

	// File is the config file that was read, "" when none.
	File string
	// sources says where each key's value came from: "default", "file",
	// "env IMPRINT_…", "flag --data-dir" or a fallback variable.
	sources map[string]string
}

// LLMConfig is the llm section.
type LLMConfig struct {
	Provider   string // none | openai | anthropic
	BaseURL    string
	APIKey     string
	Model      string
	Timeout    time.Duration // per HTTP attempt
	MaxRetries int
	// Concurrency caps in-flight LLM requests process-wide.
	Concurrency int
	// Budget limits each scope's LLM spending per hour (0 = off).
	Budget BudgetConfig
}

// BudgetConfig is the llm.budget section: per scope, in any sliding hour.
type BudgetConfig struct {
	CallsPerHour        int
	PromptTokensPerHour int
}

// EmbeddingConfig is the embedding section.
type EmbeddingConfig struct {
	Provider   string // hash | openai | none
	BaseURL    string
	APIKey     string
	Model      string
	Dimensions int
}

// CaptureConfig is the capture section (trace capture, seed 000).
type CaptureConfig struct {
	MaxTextChars           int
	MaxToolOutputChars     int
	EmbedTraces            bool
	AlphaScoring           bool
	SynthReflections       bool
	LLMConcurrency         int
	BatchMode              string // per_step | per_episode | auto
	BatchThreshold         int
	ReflectionContextMode  string // task | task_downstream
	LongEpisodeReflectMode string // per_step | per_step_downstream
	DownstreamStepCount    int    // 0..3
	CaptureAbandoned       bool
}

// ExtractionConfig is the extraction section (memory extraction, seed 004).
type ExtractionConfig struct {
	MaxMessagesPerExtraction int
	MaxBackgroundMessages    int
	MaxMemoriesPerSession    int
	EnableDedup              bool
	ConflictRecallTopK       int
	EveryNRounds             int
	Idle                     time.Duration
	LLMTimeout               time.Duration
	RecallMinScore           float64
}

// SessionConfig is the session section.
type SessionConfig struct {
	// EpisodeIdle finalizes an open episode with no new turn for this long.
	EpisodeIdle time.Duration
}

// JobsConfig is the jobs section: the engine of imprint serve's durable
// jobs on SQLite.
type JobsConfig struct {
	Engine string // table | river
}

// ServerConfig is the server section (imprint serve).
type ServerConfig struct {
	Addr           string
	RequestTimeout time.Duration
	APIToken       string
	// AllowedHosts are the Host names served besides loopback ones
	// (server.allowed_hosts).
	AllowedHosts []string
	// IdleTimeout closes keep-alive connections idle this long.
	IdleTimeout time.Duration
	// MaxTurnsPerRequest caps the messages or turns one request carries.
	MaxTurnsPerRequest int
}

// Providers and modes accepted by the configuration.
const (
	ProviderNone      = "none"
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderHash      = "hash"

	// DefaultOpenAIBaseURL is llm.base_url / embedding.base_url for openai when unset.
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	// DefaultAnthropicBaseURL is llm.base_url for anthropic when unset.
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	// StoreSQLite is the default store.
	StoreSQLite = "sqlite"

	// JobsEngineTable keeps jobs in the store's own jobs table;
	// JobsEngineRiver runs them on River (riversqlite) in the same file.
	JobsEngineTable = "table"
	JobsEngineRiver = "river"
)

// Defaults returns the configuration with every key at its default, as Load
// gives it without a file or environment (DataDir left empty): the values
// the pipelines' own defaults must match.
func Defaults() *Config {
	c := defaultConfig("")
	c.applyFallbacks(Source{LookupEnv: func(string) (string, bool) { return "", false }})
	return c
}

// defaultConfig returns the defaults of CONTRACTS.md §1 for dataDir.
func defaultConfig(dataDir string) *Config {
	return &Config{
		DataDir: dataDir,
		Store:   StoreSQLite,
		LLM: LLMConfig{
			Provider:    ProviderNone,
			Timeout:     45 * time.Second,
			MaxRetries:  3,
			Concurrency: 4,
		},
		Embedding: EmbeddingConfig{Provider: ProviderHash},
		Capture: CaptureConfig{
			MaxTextChars:           4000,
			MaxToolOutputChars:     2000,
			EmbedTraces:            true,
			AlphaScoring:           true,
			SynthReflections:       false,
			LLMConcurrency:         4,
			BatchMode:              "auto",
			BatchThreshold:         12,
			ReflectionContextMode:  "task",
			LongEpisodeReflectMode: "per_step",
			DownstreamStepCount:    3,
			CaptureAbandoned:       true,
		},
		Extraction: ExtractionConfig{
			MaxMessagesPerExtraction: 10,
			MaxBackgroundMessages:    5,
			MaxMemoriesPerSession:    10,
			EnableDedup:              true,
			ConflictRecallTopK:       5,
			EveryNRounds:             5,
			Idle:                     10 * time.Minute,
			LLMTimeout:               180 * time.Second,
			RecallMinScore:           0.5,
		},
		Session: SessionConfig{EpisodeIdle: 30 * time.Minute},
		Server: ServerConfig{
			Addr:               "127.0.0.1:8420",
			RequestTimeout:     30 * time.Second,
			IdleTimeout:        120 * time.Second,
			MaxTurnsPerRequest: 1000,
		},
		Jobs:    JobsConfig{Engine: JobsEngineRiver},
		sources: map[string]string{},
	}
}

// configKey is one key of the configuration: its dotted name, the field it
// sets, and the rule its value must follow. The environment variable name
// is derived from the dotted name.
type configKey struct {
	name   string
	field  func(c *Config) any // *string, *[]string, *int, *bool, *time.Duration or *float64
	secret bool
	enum   []string
	min    *float64 // inclusive bounds for numbers; durations must be > 0
	max    *float64
	doc    string
}

func bound(v float64) *float64 { return &v }

// configKeys lists every configuration key, in the order of CONTRACTS.md §1.
var configKeys = []configKey{
	{name: "data_dir", field: func(c *Config) any { return &c.DataDir }, doc: "SQLite file, JSONL shards, logs"},
	{name: "store", field: func(c *Config) any { return &c.Store }, doc: "`sqlite` (file `<data_dir>/imprint.db`) or a `postgres://` URL (PostgreSQL, shared by several nodes: docs/postgres.md)"},
	{name: "llm.provider", field: func(c *Config) any { return &c.LLM.Provider }, enum: []string{ProviderNone, ProviderOpenAI, ProviderAnthropic}, doc: "`none`, `openai` (any OpenAI-compatible endpoint) or `anthropic`"},
	{name: "llm.base_url", field: func(c *Config) any { return &c.LLM.BaseURL }, doc: "endpoint; falls back to `OPENAI_BASE_URL` (openai), else the provider's public API"},
	{name: "llm.api_key", field: func(c *Config) any { return &c.LLM.APIKey }, secret: true, doc: "falls back to `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`"},
	{name: "llm.model", field: func(c *Config) any { return &c.LLM.Model }, doc: "required when the provider is not `none`"},
	{name: "llm.timeout", field: func(c *Config) any { return &c.LLM.Timeout }, doc: "per HTTP attempt"},
	{name: "llm.max_retries", field: func(c *Config) any { return &c.LLM.MaxRetries }, min: bound(0), max: bound(20), doc: "retries on 429 / 5xx / network errors"},
	{name: "llm.concurrency", field: func(c *Config) any { return &c.LLM.Concurrency }, min: bound(1), max: bound(256), doc: "process-wide cap on in-flight LLM requests"},
	{name: "llm.budget.calls_per_hour", field: func(c *Config) any { return &c.LLM.Budget.CallsPerHour }, min: bound(0), doc: "LLM call attempts a scope may make in any hour; `0` is off. When reached, the scope's capture and extraction jobs wait (nothing is lost) and `/v1/status` says until when"},
	{name: "llm.budget.prompt_tokens_per_hour", field: func(c *Config) any { return &c.LLM.Budget.PromptTokensPerHour }, min: bound(0), doc: "prompt tokens a scope may send in any hour; `0` is off; same waiting"},
	{name: "embedding.provider", field: func(c *Config) any { return &c.Embedding.Provider }, enum: []string{ProviderHash, ProviderOpenAI, ProviderNone}, doc: "`hash` (local, deterministic), `openai` (any `/v1/embeddings`) or `none`"},
	{name: "embedding.base_url", field: func(c *Config) any { return &c.Embedding.BaseURL }, doc: "openai: falls back to `OPENAI_BASE_URL`, else the public API"},
	{name: "embedding.api_key", field: func(c *Config) any { return &c.Embedding.APIKey }, secret: true, doc: "openai: falls back to `OPENAI_API_KEY`"},
	{name: "embedding.model", field: func(c *Config) any { return &c.Embedding.Model }, doc: "required for `openai`"},
	{name: "embedding.dimensions", field: func(c *Config) any { return &c.Embedding.Dimensions }, min: bound(0), max: bound(65536), doc: "`384` for `hash`; for `openai`, 0 keeps the model's size"},
	{name: "capture.max_text_chars", field: func(c *Config) any { return &c.Capture.MaxTextChars }, min: bound(32), doc: "per text field: head 55 % + marker + tail 45 %"},
	{name: "capture.max_tool_output_chars", field: func(c *Config) any { return &c.Capture.MaxToolOutputChars }, min: bound(32), doc: "per tool output, same clamp"},
	{name: "capture.embed_traces", field: func(c *Config) any { return &c.Capture.EmbedTraces }, doc: "embed each trace's state and action"},
	{name: "capture.alpha_scoring", field: func(c *Config) any { return &c.Capture.AlphaScoring }, doc: "score reflections with the LLM (α)"},
	{name: "capture.synth_reflections", field: func(c *Config) any { return &c.Capture.SynthReflections }, doc: "let the LLM write missing reflections"},
	{name: "capture.llm_concurrency", field: func(c *Config) any { return &c.Capture.LLMConcurrency }, min: bound(1), max: bound(256), doc: "per-step workers"},
	{name: "capture.batch_mode", field: func(c *Config) any { return &c.Capture.BatchMode }, enum: []string{"per_step", "per_episode", "auto"}, doc: "`per_step`, `per_episode` or `auto`"},
	{name: "capture.batch_threshold", field: func(c *Config) any { return &c.Capture.BatchThreshold }, min: bound(1), doc: "`auto` batches episodes up to this many steps"},
	{name: "capture.reflection_context_mode", field: func(c *Config) any { return &c.Capture.ReflectionContextMode }, enum: []string{"task", "task_downstream"}, doc: "`task` or `task_downstream`"},
	{name: "capture.long_episode_reflect_mode", field: func(c *Config) any { return &c.Capture.LongEpisodeReflectMode }, enum: []string{"per_step", "per_step_downstream"}, doc: "`per_step` or `per_step_downstream`"},
	{name: "capture.downstream_step_count", field: func(c *Config) any { return &c.Capture.DownstreamStepCount }, min: bound(0), max: bound(3), doc: "0..3 downstream steps previewed"},
	{name: "capture.capture_abandoned", field: func(c *Config) any { return &c.Capture.CaptureAbandoned }, doc: "capture abandoned episodes too"},
	{name: "extraction.max_messages_per_extraction", field: func(c *Config) any { return &c.Extraction.MaxMessagesPerExtraction }, min: bound(1), max: bound(1000), doc: "new-message window"},
	{name: "extraction.max_background_messages", field: func(c *Config) any { return &c.Extraction.MaxBackgroundMessages }, min: bound(0), max: bound(1000), doc: "context window"},
	{name: "extraction.max_memories_per_session", field: func(c *Config) any { return &c.Extraction.MaxMemoriesPerSession }, min: bound(1), doc: "cap per extraction call"},
	{name: "extraction.enable_dedup", field: func(c *Config) any { return &c.Extraction.EnableDedup }, doc: "pre-check and LLM judge against stored memories"},
	{name: "extraction.conflict_recall_top_k", field: func(c *Config) any { return &c.Extraction.ConflictRecallTopK }, min: bound(1), max: bound(100), doc: "candidates recalled per new memory"},
	{name: "extraction.every_n_rounds", field: func(c *Config) any { return &c.Extraction.EveryNRounds }, min: bound(1), doc: "schedule after this many user rounds"},
	{name: "extraction.idle", field: func(c *Config) any { return &c.Extraction.Idle }, doc: "schedule after this much silence"},
	{name: "extraction.llm_timeout", field: func(c *Config) any { return &c.Extraction.LLMTimeout }, doc: "extraction and dedup calls"},
	{name: "extraction.recall_min_score", field: func(c *Config) any { return &c.Extraction.RecallMinScore }, min: bound(-1), max: bound(1), doc: "vector candidates below this cosine are not candidates"},
	{name: "session.episode_idle", field: func(c *Config) any { return &c.Session.EpisodeIdle }, doc: "an open episode with no new turn for this long is finalized"},
	{name: "server.addr", field: func(c *Config) any { return &c.Server.Addr }, doc: "listen address"},
	{name: "server.request_timeout", field: func(c *Config) any { return &c.Server.RequestTimeout }, doc: "per HTTP request"},
	{name: "server.api_token", field: func(c *Config) any { return &c.Server.APIToken }, secret: true, doc: "required as `Authorization: Bearer …` when set; mandatory for a non-loopback address"},
	{name: "server.allowed_hosts", field: func(c *Config) any { return &c.Server.AllowedHosts }, doc: "host names served besides `localhost`, `*.localhost`, loopback addresses and the address a connection came in on (a YAML list, or comma-separated); `*.example.com` allows its subdomains; other `Host` values get 421"},
	{name: "server.idle_timeout", field: func(c *Config) any { return &c.Server.IdleTimeout }, doc: "an idle keep-alive connection is closed after this long"},
	{name: "server.max_turns_per_request", field: func(c *Config) any { return &c.Server.MaxTurnsPerRequest }, min: bound(1), doc: "messages or turns one `/v1` request may carry; more is 413 `too_large` and nothing is written (our clients split larger posts)"},
	{name: "jobs.engine", field: func(c *Config) any { return &c.Jobs.Engine }, enum: []string{JobsEngineTable, JobsEngineRiver}, doc: "durable jobs of `imprint serve` on SQLite (on PostgreSQL always River): `river` (River's SQLite driver in the store's file and transactions; unfinished table jobs move to River at start) or `table` (the store's own jobs table)"},
}

// EnvName returns the environment variable that sets the dotted key name:
// IMPRINT_ + the name in upper snake case.
func EnvName(name string) string {
	return "IMPRINT_" + strings.ToUpper(strings.ReplaceAll(name, ".", "_"))
}

func lookupKey(name string) (configKey, bool) {
	for _, k := range configKeys {
		if k.name == name {
			return k, true
		}
	}
	return configKey{}, false
}

// isSection reports whether name is a section prefix of some key ("llm").
func isSection(name string) bool {
	for _, k := range configKeys {
		if strings.HasPrefix(k.name, name+".") {
			return true
		}
	}
	return false
}

// set parses s into k's field of c and records where it came from.
// The error is of kind ErrInvalid and names the key and the source.
func (k configKey) set(c *Config, s, source string) error {
	bad := func(want string) error {
		return imprint.Invalidf("config %s (%s): %s must be %s, got %q", k.name, source, k.name, want, s)
	}
	s = strings.TrimSpace(s)
	switch p := k.field(c).(type) {
	case *string:
		*p = s
	case *[]string:
		*p = splitList(s)
	case *int:
		v, err := strconv.Atoi(s)
		if err != nil {
			return bad("an integer")
		}
		*p = v
	case *bool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return bad("true or false")
		}
		*p = v
	case *time.Duration:
		v, err := time.ParseDuration(s)
		if err != nil {
			return bad("a duration like 45s or 10m")
		}
		*p = v
	case *float64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad("a number")
		}
		*p = v
	default:
		return fmt.Errorf("config %s: unsupported field type %T", k.name, p)
	}
	c.sources[k.name] = source
	return nil
}

// value formats k's field of c as it would be written in the config file.
func (k configKey) value(c *Config) string {
	switch p := k.field(c).(type) {
	case *string:
		return *p
	case *[]string:
		return strings.Join(*p, ",")
	case *int:
		return strconv.Itoa(*p)
	case *bool:
		return strconv.FormatBool(*p)
	case *time.Duration:
		return formatDuration(*p)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	return ""
}

// check validates k's field of c against its rule.
func (k configKey) check(c *Config) error {
	bad := func(format string, args ...any) error {
		return imprint.Invalidf("config %s (%s): %s %s", k.name, c.Source(k.name), k.name, fmt.Sprintf(format, args...))
	}
	switch p := k.field(c).(type) {
	case *string:
		if len(k.enum) > 0 && !slices.Contains(k.enum, *p) {
			return bad("must be one of %s, got %q", strings.Join(k.enum, ", "), *p)
		}
	case *int:
		if k.min != nil && float64(*p) < *k.min {
			if k.max != nil {
				return bad("must be between %g and %g, got %d", *k.min, *k.max, *p)
			}
			return bad("must be at least %g, got %d", *k.min, *p)
		}
		if k.max != nil && float64(*p) > *k.max {
			return bad("must be between %g and %g, got %d", *k.min, *k.max, *p)
		}
	case *float64:
		if (k.min != nil && *p < *k.min) || (k.max != nil && *p > *k.max) {
			return bad("must be between %g and %g, got %g", *k.min, *k.max, *p)
		}
	case *time.Duration:
		if *p <= 0 {
			return bad("must be a positive duration, got %s", *p)
		}
	}
	return nil
}

// Source says where key's value came from: "default", "file <path>",
// "env IMPRINT_…", "flag --…" or a fallback variable such as
// "env OPENAI_API_KEY".
func (c *Config) Source(key string) string {
	if s, ok := c.sources[key]; ok {
		return s
	}
	return "default"
}

// Source is what Load reads besides the file: the environment
// and the flags that were given.
type Source struct {
	LookupEnv func(string) (string, bool)
	// File is --config when given.
	File string
	// DataDir is --data-dir when DataDirSet.
	DataDir    string
	DataDirSet bool
	// Flags are the values of command flags that set a key (imprint serve
	// --addr sets server.addr): applied last, over the file and the
	// environment.
	Flags []Flag
}

// Flag is a command-line flag's value for a configuration key.
type Flag struct {
	// Key is the configuration key ("server.addr"), Name the flag
	// ("addr"), Value what was given.
	Key, Name, Value string
}

func (s Source) env(name string) (string, bool) {
	v, ok := s.LookupEnv(name)
	if !ok || strings.TrimSpace(v) == "" {
		return "", false
	}
	return v, true
}

// Load builds the configuration: defaults, then the config file
// (--config, else IMPRINT_CONFIG, else <data dir>/imprint.yaml if present),
// then IMPRINT_* variables, then flags; then fallbacks and validation.
// Errors are of kind ErrInvalid and name the offending key.
func Load(src Source) (*Config, error) {
	if src.LookupEnv == nil {
		src.LookupEnv = func(string) (string, bool) { return "", false }
	}
	c := defaultConfig(defaultDataDir(src))

	// Find the file. The default location depends on the data dir as given
	// by flag or environment (a data_dir inside the file cannot move it).
	path, required := src.File, true
	if path == "" {
		if v, ok := src.env("IMPRINT_CONFIG"); ok {
			path = v
		}
	}
	if path == "" {
		dir := c.DataDir
		if v, ok := src.env(EnvName("data_dir")); ok {
			dir = v
		}
		if src.DataDirSet {
			dir = src.DataDir
		}
		path, required = filepath.Join(expandHome(dir, src), "imprint.yaml"), false
	}
	if err := c.readFile(path, required); err != nil {
		return nil, err
	}

	for _, k := range configKeys {
		name := EnvName(k.name)
		if v, ok := src.env(name); ok {
			if err := k.set(c, v, "env "+name); err != nil {
				return nil, err
			}
		}
	}
	if src.DataDirSet {
		if err := c.set("data_dir", src.DataDir, "flag --data-dir"); err != nil {
			return nil, err
		}
	}
	for _, f := range src.Flags {
		if err := c.set(f.Key, f.Value, "flag --"+f.Name); err != nil {
			return nil, err
		}
	}
	c.DataDir = expandHome(c.DataDir, src)
	if strings.TrimSpace(c.DataDir) == "" {
		return nil, imprint.Invalidf("config data_dir (%s): data_dir must not be empty", c.Source("data_dir"))
	}
	c.applyFallbacks(src)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) set(name, value, source string) error {
	k, ok := lookupKey(name)
	if !ok {
		return fmt.Errorf("config: no key %s", name)
	}
	return k.set(c, value, source)
}

// readFile applies the YAML file at path. A missing file is an error only
// when it was asked for. Unknown keys and bad values are errors naming the
// dotted key and the line.
func (c *Config) readFile(path string, required bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path once
		}
		return imprint.Invalidf("config file %s: %v", path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return imprint.Invalidf("config file %s: %v", path, err)
	}
	c.File = path
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty file
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	return c.applyMapping(path, root, "")
}

func (c *Config) applyMapping(path string, n *yaml.Node, prefix string) error {
	if n.Kind != yaml.MappingNode {
		where := "the file"
		if prefix != "" {
			where = prefix
		}
		return imprint.Invalidf("config file %s: line %d: %s must be a mapping of keys", path, n.Line, where)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		name := kn.Value
		if prefix != "" {
			name = prefix + "." + kn.Value
		}
		if k, ok := lookupKey(name); ok {
			if vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" {
				continue // "key:" with no value leaves the default
			}
			value, err := scalarOrList(path, k, vn, name)
			if err != nil {
				return err
			}
			if err := k.set(c, value, fmt.Sprintf("file %s line %d", path, vn.Line)); err != nil {
				return err
			}
			continue
		}
		if isSection(name) {
			if vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" {
				continue
			}
			if err := c.applyMapping(path, vn, name); err != nil {
				return err
			}
			continue
		}
		return imprint.Invalidf("config file %s: line %d: unknown key %s", path, kn.Line, name)
	}
	return nil
}

// scalarOrList is the value of a YAML node for key k: a scalar, or for a
// list key a sequence of scalars, joined with commas.
func scalarOrList(path string, k configKey, vn *yaml.Node, name string) (string, error) {
	if vn.Kind == yaml.ScalarNode {
		return vn.Value, nil
	}
	if _, list := k.field(&Config{}).(*[]string); list && vn.Kind == yaml.SequenceNode {
		items := make([]string, 0, len(vn.Content))
		for _, it := range vn.Content {
			if it.Kind != yaml.ScalarNode || strings.Contains(it.Value, ",") {
				return "", imprint.Invalidf("config file %s: line %d: %s must be a list of single values without commas", path, it.Line, name)
			}
			items = append(items, it.Value)
		}
		return strings.Join(items, ","), nil
	}
	return "", imprint.Invalidf("config file %s: line %d: %s must be a single value", path, vn.Line, name)
}

// splitList splits a comma-separated list value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, it := range strings.Split(s, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

// applyFallbacks fills what the configuration leaves unset from the
// provider variables (OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY)
// and the providers' public endpoints. They never change a provider.
func (c *Config) applyFallbacks(src Source) {
	fill := func(key string, field *string, envs ...string) {
		if *field != "" {
			return
		}
		for _, e := range envs {
			if v, ok := src.env(e); ok {
				*field = strings.TrimSpace(v)
				c.sources[key] = "env " + e
				return
			}
		}
	}
	def := func(key string, field *string, v string) {
		if *field == "" {
			*field = v
			c.sources[key] = "default"
		}
	}
	switch c.LLM.Provider {
	case ProviderOpenAI:
		fill("llm.base_url", &c.LLM.BaseURL, "OPENAI_BASE_URL")
		fill("llm.api_key", &c.LLM.APIKey, "OPENAI_API_KEY")
		def("llm.base_url", &c.LLM.BaseURL, DefaultOpenAIBaseURL)
	case ProviderAnthropic:
		fill("llm.api_key", &c.LLM.APIKey, "ANTHROPIC_API_KEY")
		def("llm.base_url", &c.LLM.BaseURL, DefaultAnthropicBaseURL)
	}
	switch c.Embedding.Provider {
	case ProviderOpenAI:
		fill("embedding.base_url", &c.Embedding.BaseURL, "OPENAI_BASE_URL")
		fill("embedding.api_key", &c.Embedding.APIKey, "OPENAI_API_KEY")
		def("embedding.base_url", &c.Embedding.BaseURL, DefaultOpenAIBaseURL)
	case ProviderHash:
		if c.Embedding.Dimensions == 0 {
			c.Embedding.Dimensions = hashDimensions
		}
	}
}

// Validate checks every key against its rule and the rules between keys.
// Errors are of kind ErrInvalid and name the key.
func (c *Config) Validate() error {
	for _, k := range configKeys {
		if err := k.check(c); err != nil {
			return err
		}
	}
	if c.Store != StoreSQLite && !IsPostgresURL(c.Store) {
		return imprint.Invalidf("config store (%s): store must be %q or a postgres:// URL, got %q", c.Source("store"), StoreSQLite, MaskURL(c.Store))
	}
	if c.LLM.Provider != ProviderNone && strings.TrimSpace(c.LLM.Model) == "" {
		return imprint.Invalidf("config llm.model: llm.model is required when llm.provider is %s (set %s)", c.LLM.Provider, EnvName("llm.model"))
	}
	if c.LLM.Provider != ProviderNone {
		if err := checkURL("llm.base_url", c.LLM.BaseURL, c); err != nil {
			return err
		}
	}
	switch c.Embedding.Provider {
	case ProviderOpenAI:
		if strings.TrimSpace(c.Embedding.Model) == "" {
			return imprint.Invalidf("config embedding.model: embedding.model is required when embedding.provider is openai (set %s)", EnvName("embedding.model"))
		}
		if err := checkURL("embedding.base_url", c.Embedding.BaseURL, c); err != nil {
			return err
		}
	case ProviderHash:
		if c.Embedding.Dimensions != hashDimensions {
			return imprint.Invalidf("config embedding.dimensions (%s): the hash embedder has %d dimensions, got %d", c.Source("embedding.dimensions"), hashDimensions, c.Embedding.Dimensions)
		}
	}
	if _, _, err := net.SplitHostPort(c.Server.Addr); err != nil {
		return imprint.Invalidf("config server.addr (%s): server.addr must be host:port, got %q", c.Source("server.addr"), c.Server.Addr)
	}
	return nil
}

func checkURL(key, v string, c *Config) error {
	if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		return imprint.Invalidf("config %s (%s): %s must be an http:// or https:// URL, got %q", key, c.Source(key), key, v)
	}
	return nil
}

// CheckServe returns an error of kind ErrInvalid when the server would
// listen on a non-loopback address without server.api_token, and no API
// key exists (hasKeys reports whether one does; it is asked only then).
// imprint serve calls it before listening (exit 2).
func (c *Config) CheckServe(hasKeys func() (bool, error)) error {
	host, _, err := net.SplitHostPort(c.Server.Addr)
	if err != nil {
		return imprint.Invalidf("config server.addr: server.addr must be host:port, got %q", c.Server.Addr)
	}
	if c.Server.APIToken != "" || IsLoopback(host) {
		return nil
	}
	if hasKeys != nil {
		has, err := hasKeys()
		if err != nil {
			return err
		}
		if has {
			return nil
		}
	}
	return imprint.Invalidf("config server.api_token: server.api_token or an API key (imprint keys create) is required to listen on the non-loopback address %s (set %s, make a key, or listen on 127.0.0.1)", c.Server.Addr, EnvName("server.api_token"))
}

// ServerURL is the URL a client on this machine reaches server.addr at:
// http://host:port, a wildcard host (empty, 0.0.0.0, ::) as 127.0.0.1.
// ErrInvalid when server.addr is not host:port.
func (c *Config) ServerURL() (string, error) {
	host, port, err := net.SplitHostPort(c.Server.Addr)
	if err != nil {
		return "", imprint.Invalidf("config server.addr %q: %v", c.Server.Addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// IsLoopback reports whether host names this machine's loopback (localhost
// or a loopback address).
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsPostgresURL reports whether s is a postgres:// or postgresql:// URL.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// defaultDataDir is $XDG_DATA_HOME/imprint, else ~/.local/share/imprint.
func defaultDataDir(src Source) string {
	if v, ok := src.env("XDG_DATA_HOME"); ok {
		return filepath.Join(v, "imprint")
	}
	return filepath.Join(homeDir(src), ".local", "share", "imprint")
}

func homeDir(src Source) string {
	if v, ok := src.env("HOME"); ok {
		return v
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "."
}

// expandHome replaces a leading ~ with the home directory.
func expandHome(p string, src Source) string {
	if p == "~" {
		return homeDir(src)
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(homeDir(src), p[2:])
	}
	return p
}

// maskSecret shows a secret as **** plus its last four characters (only
// **** when it is too short for that to be safe).
func maskSecret(s string) string {
	if s == "" {
		return ""
	}
	if len(s) < 12 {
		return "****"
	}
	return "****" + s[len(s)-4:]
}

// MaskURL hides the password of a URL such as postgres://user:pass@host/db.
func MaskURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return s
	}
	user, _, hasPass := strings.Cut(userinfo, ":")
	if !hasPass {
		return s
	}
	return scheme + "://" + user + ":****@" + host
}

// Entries returns every key with its value in effect (secrets masked) and
// its source, in registry order. doctor prints them.
func (c *Config) Entries() []ConfigEntry {
	out := make([]ConfigEntry, 0, len(configKeys))
	for _, k := range configKeys {
		v := k.value(c)
		if k.secret {
			v = maskSecret(v)
		}
		if k.name == "store" {
			v = MaskURL(v)
		}
		out = append(out, ConfigEntry{Key: k.name, Env: EnvName(k.name), Value: v, Source: c.Source(k.name)})
	}
	return out
}

// ConfigEntry is one key of the configuration in effect.
type ConfigEntry struct {
	Key    string `json:"key"`
	Env    string `json:"env"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// formatDuration writes d as a config value: 45s, 10m, 1h30m.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// hashDimensions is the dimension of the local hash embedder.
const hashDimensions = 384
