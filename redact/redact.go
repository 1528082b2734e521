package redact

import (
	"math/bits"
	"regexp"
	"strconv"
	"strings"
)

// Marker prefix of every replacement; the full marker is "[REDACTED:<kind>]".
const markerPrefix = "[REDACTED:"

// Kinds of secret, as they appear in markers.
const (
	KindPrivateKey    = "private_key"
	KindURLPassword   = "url_password"
	KindSlackWebhook  = "slack_webhook"
	KindAnthropicKey  = "anthropic_key"
	KindOpenAIKey     = "openai_key"
	KindStripeKey     = "stripe_key"
	KindGitHubToken   = "github_token"
	KindGitLabToken   = "gitlab_token"
	KindSlackToken    = "slack_token"
	KindNPMToken      = "npm_token"
	KindHFToken       = "huggingface_token"
	KindGoogleAPIKey  = "google_api_key"
	KindAWSAccessKey  = "aws_access_key"
	KindAWSSecret     = "aws_secret"
	KindJWT           = "jwt"
	KindBearer        = "bearer"
	KindBasicAuth     = "basic_auth"
	KindPassword      = "password"
	KindGenericSecret = "generic_api_key"
)

const (
	// maxPasses bounds the re-runs that make redaction idempotent: a
	// replacement can change what surrounds a near-miss, so Count repeats
	// the rules until a pass finds nothing.
	maxPasses = 4
	// window is how far past its anchor a match may reach; the PEM rule
	// allows more.
	window    = 4096
	pemWindow = 64 << 10
)

// rule recognises one kind of secret. Go's regexp engine is slow on
// patterns without a literal prefix, so a rule is not run over the whole
// text: it is tried only where one of its anchors occurs, as a regexp
// anchored there and limited to a window.
type rule struct {
	kind string
	// anchors are literals (3 bytes or more) every match starts with;
	// fold anchors are ASCII lowercase and found ignoring case.
	anchors []string
	fold    []string
	// re matches at an anchor (it starts with ^).
	re *regexp.Regexp
	// group is the submatch that is the secret; 0 means the whole match.
	// Text outside it (a key name, "Bearer ", a URL's user) is kept.
	group int
	// wordStart requires that no ASCII letter, digit or _ precede the
	// anchor, so "xsk-..." or "task-..." are not keys.
	wordStart bool
	// before, when set, vetoes an anchor by what precedes it.
	before func(s string, at int) bool
	// accept, when set, vetoes a secret that does not look secret.
	accept func(secret string) bool
	// window overrides the default window.
	window int
	// ids are the rule's anchors in needles, set by init.
	ids []int
}

// sep is the separator of a "<key><sep><value>" assignment: = : := =>,
// with optional quotes (JSON-escaped too) and blanks.
const sep = `\\?["']?[ \t]*(?:=>|:=|[:=])[ \t]*\\?["']?`

// value is an assigned value of at least minLen characters, in a group.
func value(minLen int) string {
	return `([^\s"'\\\[\](){}<>,;&|` + "`" + `]{` + strconv.Itoa(minLen) + `,})`
}

var rules = []rule{
	{
		kind:    KindPrivateKey,
		anchors: []string{"-----BEGIN"},
		// The body is base64 lines (newlines may be escaped as \n, lines
		// indented) and encryption headers, then the END line, which is
		// missing when the text was cut.
		re:     regexp.MustCompile(`^-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\\]|[\r\n][ \t]*|(?:Proc-Type|DEK-Info):[^\r\n]*)*(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)?`),
		window: pemWindow,
	},
	{
		kind:    KindURLPassword,
		anchors: []string{"://"},
		re:      regexp.MustCompile(`^://[^:/?#@\s"'<>\[\]]{1,128}:([^/?#\s"'<>]{1,256})@`),
		group:   1,
		before:  func(s string, at int) bool { return at > 0 && isWordByte(s[at-1]) },
	},
	{
		kind:    KindSlackWebhook,
		anchors: []string{"https://hooks.slack.com/"},
		re:      regexp.MustCompile(`^https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{8,}`),
	},
	{
		kind:      KindAnthropicKey,
		anchors:   []string{"sk-ant-"},
		re:        regexp.MustCompile(`^sk-ant-[A-Za-z0-9_-]{20,}`),
		wordStart: true,
	},
	{
		kind:      KindOpenAIKey,
		anchors:   []string{"sk-"},
		re:        openAIKey,
		wordStart: true,
		accept:    isOpenAIKey,
	},
	{
		kind:      KindStripeKey,
		anchors:   []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"},
		re:        regexp.MustCompile(`^[sr]k_(?:live|test)_[0-9A-Za-z]{16,}`),
		wordStart: true,
		accept:    hasDigit,
	},
	{
		kind:      KindGitHubToken,
		anchors:   []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		re:        regexp.MustCompile(`^(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`),
		wordStart: true,
	},
	{
		kind:      KindGitLabToken,
		anchors:   []string{"glpat-"},
		re:        regexp.MustCompile(`^glpat-[0-9A-Za-z_-]{20,}`),
		wordStart: true,
	},
	{
		kind:      KindSlackToken,
		anchors:   []string{"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xapp-"},
		re:        regexp.MustCompile(`^(?:xox[abposr]|xapp)-[0-9A-Za-z-]{10,}`),
		wordStart: true,
		accept:    hasDigit,
	},
	{
		kind:      KindNPMToken,
		anchors:   []string{"npm_"},
		re:        regexp.MustCompile(`^npm_[A-Za-z0-9]{36}\b`),
		wordStart: true,
	},
	{
		kind:      KindHFToken,
		anchors:   []string{"hf_"},
		re:        regexp.MustCompile(`^hf_[A-Za-z0-9]{30,}\b`),
		wordStart: true,
		accept:    hasDigit,
	},
	{
		kind:      KindGoogleAPIKey,
		anchors:   []string{"AIza"},
		re:        regexp.MustCompile(`^AIza[0-9A-Za-z_-]{35}`),
		wordStart: true,
	},
	{
		kind:      KindAWSAccessKey,
		anchors:   []string{"AKIA", "ASIA", "ABIA", "ACCA"},
		re:        regexp.MustCompile(`^(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`),
		wordStart: true,
	},
	{
		kind:  KindAWSSecret,
		fold:  []string{"aws"},
		re:    regexp.MustCompile(`(?i)^(aws_?secret(?:_?access)?(?:_?key)?` + sep + `)([A-Za-z0-9/+=]{40})\b`),
		group: 2,
	},
	{
		kind:      KindJWT,
		anchors:   []string{"eyJ"},
		re:        regexp.MustCompile(`^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`),
		wordStart: true,
	},
	{
		kind:      KindBearer,
		fold:      []string{"bearer"},
		re:        regexp.MustCompile(`(?i)^(bearer[ \t]+)([A-Za-z0-9._~+/=-]{16,})`),
		group:     2,
		wordStart: true,
		accept:    func(v string) bool { return looksRandom(v, 32) },
	},
	{
		kind:      KindBasicAuth,
		fold:      []string{"authorization"},
		re:        regexp.MustCompile(`(?i)^(authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?basic[ \t]+)([A-Za-z0-9+/=]{8,})`),
		group:     2,
		wordStart: true,
		accept:    func(v string) bool { return looksRandom(v, 16) },
	},
	{
		kind:   KindPassword,
		fold:   []string{"passw", "passphrase"},
		re:     regexp.MustCompile(`(?i)^((?:passw(?:or)?d|passphrase)` + sep + `)` + value(4)),
		group:  2,
		accept: func(v string) bool { return assignedValue(v, 6, 16) },
	},
	{
		// A key that ends in "secret", "token", "credential(s)" or
		// "<api|access|auth|secret|private|signing|encryption|master>[_-]key".
		// The keyword must end the key, so "tokenizer=trigram" and
		// "secret_santa=x" are not assignments of a secret.
		kind:   KindGenericSecret,
		fold:   []string{"secret", "token", "credential", "key"},
		re:     regexp.MustCompile(`(?i)^((?:secret|token|credentials?|key)` + sep + `)` + value(8)),
		group:  2,
		before: keyQualified,
		accept: func(v string) bool { return assignedValue(v, 8, 24) },
	},
}

// keyQualified accepts the anchor "key" only after one of the words that
// make a key name a secret's name (api_key, secret-key, accessKey, ...).
func keyQualified(s string, at int) bool {
	if !strings.EqualFold(s[at:min(at+3, len(s))], "key") {
		return true
	}
	p := at
	if p > 0 && (s[p-1] == '_' || s[p-1] == '-') {
		p--
	}
	for _, w := range []string{"api", "access", "auth", "secret", "private", "signing", "encryption", "master"} {
		if p >= len(w) && strings.EqualFold(s[p-len(w):p], w) {
			return true
		}
	}
	return false
}

// openAIKey matches OpenAI keys: legacy sk-<48>, sk-proj-, sk-svcacct-,
// sk-admin-. sk-ant- (Anthropic) is matched first by its own rule.
var openAIKey = regexp.MustCompile(`^sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}`)

// isOpenAIKey rejects kebab-case words such as sk-some-long-identifier:
// a random key has a digit.
func isOpenAIKey(v string) bool { return hasDigit(v[3:]) }

// String returns s with every recognised secret replaced by
// "[REDACTED:<kind>]". Text without secrets is returned unchanged.
func String(s string) string {
	out, _ := Count(s)
	return out
}

// Count is String that also returns how many secrets were replaced.
func Count(s string) (string, int) {
	total := 0
	for range maxPasses {
		var n int
		s, n = pass(s)
		if n == 0 {
			break
		}
		total += n
	}
	return s, total
}

// pass applies every rule once.
func pass(s string) (string, int) {
	if len(s) < 8 {
		return s, 0
	}
	var h *hits // anchors of the current s; nil once a rule changes it
	total := 0
	for i := range rules {
		if h == nil {
			h = scan(s)
		}
		var n int
		s, n = rules[i].replace(s, h)
		if n > 0 {
			h = nil
			total += n
		}
	}
	return s, total
}

// replace substitutes the marker for each accepted match of r in s.
func (r *rule) replace(s string, h *hits) (string, int) {
	next := r.anchorIter(h)
	win := r.window
	if win == 0 {
		win = window
	}
	var b strings.Builder
	last, n, from := 0, 0, 0
	for {
		at := next(from)
		if at < 0 {
			break
		}
		from = at + 1
		if r.wordStart && at > 0 && isWordByte(s[at-1]) {
			continue
		}
		if r.before != nil && !r.before(s, at) {
			continue
		}
		m := r.re.FindStringSubmatchIndex(s[at:min(len(s), at+win)])
		if m == nil || m[2*r.group] < 0 {
			continue
		}
		lo, hi := at+m[2*r.group], at+m[2*r.group+1]
		secret := s[lo:hi]
		if strings.HasPrefix(secret, markerPrefix) || (r.accept != nil && !r.accept(secret)) {
			continue
		}
		if n == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:lo])
		b.WriteString(markerPrefix)
		b.WriteString(r.kind)
		b.WriteByte(']')
		last = hi
		from = at + m[1]
		n++
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// anchorIter returns a function giving the first anchor position of r that
// is >= from, or -1.
func (r *rule) anchorIter(h *hits) func(from int) int {
	lists := make([][]int, len(r.ids))
	for k, id := range r.ids {
		lists[k] = h.pos[id]
	}
	return func(from int) int {
		best := -1
		for k, l := range lists {
			for len(l) > 0 && l[0] < from {
				l = l[1:]
			}
			lists[k] = l
			if len(l) > 0 && (best < 0 || l[0] < best) {
				best = l[0]
			}
		}
		return best
	}
}

// All rules' anchors are found in one pass over the text. needles lists
// them; a needle's bit is set in tab[j][c] when byte c can be its j-th
// byte, so one AND of three lookups per position rules out almost every
// position before any comparison.
type needle struct {
	text string
	fold bool // text is ASCII lowercase and matched ignoring case
}

var (
	needles []needle
	tab     [3][256]uint64
)

func init() {
	index := map[needle]int{}
	for i := range rules {
		r := &rules[i]
		add := func(text string, fold bool) {
			n := needle{text, fold}
			id, ok := index[n]
			if !ok {
				id = len(needles)
				index[n] = id
				needles = append(needles, n)
				for j := range 3 {
					c := text[j]
					tab[j][c] |= 1 << id
					if fold && c >= 'a' && c <= 'z' {
						tab[j][c-'a'+'A'] |= 1 << id
					}
				}
			}
			r.ids = append(r.ids, id)
		}
		for _, a := range r.anchors {
			add(a, false)
		}
		for _, f := range r.fold {
			add(f, true)
		}
	}
}

// hits holds the positions of each needle in a text, ascending.
type hits struct{ pos [][]int }

// scan finds every needle in s.
func scan(s string) *hits {
	h := &hits{pos: make([][]int, len(needles))}
	for i := 0; i+3 <= len(s); i++ {
		m := tab[0][s[i]] & tab[1][s[i+1]] & tab[2][s[i+2]]
		for m != 0 {
			id := bits.TrailingZeros64(m)
			m &= m - 1
			n := needles[id]
			if len(s)-i < len(n.text) {
				continue
			}
			rest := s[i+3 : i+len(n.text)]
			if n.fold && equalFoldASCII(rest, n.text[3:]) || !n.fold && rest == n.text[3:] {
				h.pos[id] = append(h.pos[id], i)
			}
		}
	}
	return h
}

// equalFoldASCII reports whether s equals the lowercase ASCII lower,
// ignoring ASCII case.
func equalFoldASCII(s, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func hasDigit(s string) bool {
	return strings.ContainsAny(s, "0123456789")
}

// looksRandom reports whether v mixes at least two of lower case, upper
// case and digits, or is at least singleClassLen long: generated tokens do,
// words of prose rarely.
func looksRandom(v string, singleClassLen int) bool {
	var lower, upper, digit int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= 'a' && c <= 'z':
			lower = 1
		case c >= 'A' && c <= 'Z':
			upper = 1
		case c >= '0' && c <= '9':
			digit = 1
		}
	}
	return lower+upper+digit >= 2 || len(v) >= singleClassLen
}

// assignedValue decides whether the value of a secret-named key is a
// secret rather than a reference to one (an environment variable, a path, a
// placeholder) or a plain word.
func assignedValue(v string, minLen, singleClassLen int) bool {
	if len(v) < minLen {
		return false
	}
	for _, p := range []string{"$", "/", "./", "~/", "%", "process.env", "os.environ", "env."} {
		if strings.HasPrefix(v, p) {
			return false
		}
	}
	switch strings.ToLower(v) {
	case "required", "optional", "string", "true", "false", "null", "none", "undefined", "redacted", "changeme", "password", "example":
		return false
	}
	return looksRandom(v, singleClassLen)
}
