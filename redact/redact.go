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
	KindPrivateKey      = "private_key"
	KindURLPassword     = "url_password"
	KindURLKey          = "url_key"
	KindSlackWebhook    = "slack_webhook"
	KindDiscordWebhook  = "discord_webhook"
	KindAnthropicKey    = "anthropic_key"
	KindOpenAIKey       = "openai_key"
	KindStripeKey       = "stripe_key"
	KindGitHubToken     = "github_token"
	KindGitLabToken     = "gitlab_token"
	KindGrafanaToken    = "grafana_token"
	KindSlackToken      = "slack_token"
	KindNPMToken        = "npm_token"
	KindPyPIToken       = "pypi_token"
	KindHFToken         = "huggingface_token"
	KindGoogleAPIKey    = "google_api_key"
	KindGCPKeyID        = "gcp_private_key_id"
	KindAWSAccessKey    = "aws_access_key"
	KindAWSSecret       = "aws_secret"
	KindAzureKey        = "azure_key"
	KindAzureSAS        = "azure_sas"
	KindSendGridKey     = "sendgrid_key"
	KindDigitalOcean    = "digitalocean_token"
	KindTwilioKey       = "twilio_key"
	KindTwilioSID       = "twilio_sid"
	KindMailgunKey      = "mailgun_key"
	KindHerokuKey       = "heroku_key"
	KindShopifyToken    = "shopify_token"
	KindSquareToken     = "square_token"
	KindBraintreeToken  = "braintree_token"
	KindVaultToken      = "vault_token"
	KindTerraformToken  = "terraform_token"
	KindDockerToken     = "docker_token"
	KindCircleCIToken   = "circleci_token"
	KindSentryToken     = "sentry_token"
	KindTelegramToken   = "telegram_token"
	KindDiscordToken    = "discord_token"
	KindAgeKey          = "age_key"
	KindPostmanKey      = "postman_key"
	KindLinearKey       = "linear_key"
	KindNewRelicKey     = "newrelic_key"
	KindSupabaseToken   = "supabase_token"
	KindDatabricksToken = "databricks_token"
	KindDopplerToken    = "doppler_token"
	KindPulumiToken     = "pulumi_token"
	KindJWT             = "jwt"
	KindBearer          = "bearer"
	KindBasicAuth       = "basic_auth"
	KindPassword        = "password"
	KindGenericSecret   = "generic_api_key"
	KindCardNumber      = "card_number"
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
	// fold anchors are ASCII lowercase and found ignoring case; shapes
	// are anchors given as the sets of bytes their first three bytes may
	// be ("" is any byte), for secrets whose prefix is two bytes or a
	// class (digits).
	anchors []string
	fold    []string
	shapes  []shape
	// back is how many bytes before its anchor a match starts: the
	// anchor is the rare middle of the secret (".atlasv1.").
	back int
	// re matches at the match start (it starts with ^).
	re *regexp.Regexp
	// match, when set, replaces re: it returns the end of the secret
	// starting at at, or -1.
	match func(s string, at int) int
	// group is the submatch that is the secret; 0 means the whole match.
	// Text outside it (a key name, "Bearer ", a URL's user) is kept.
	group int
	// wordStart requires that no ASCII letter, digit or _ precede the
	// match, so "xsk-..." or "task-..." are not keys.
	wordStart bool
	// before, when set, vetoes an anchor by what precedes it.
	before func(s string, at int) bool
	// accept, when set, vetoes a secret that does not look secret.
	accept func(secret string) bool
	// window overrides the default window.
	window int
	// token says a match holds no blank, so the regexp reads only up to
	// the first one: short input lets Go run its faster matcher.
	token bool
	// ids are the rule's anchors in needles, set by init.
	ids []int
}

// shape is an anchor given as three byte sets.
type shape [3]string

const (
	digits   = "0123456789"
	anyByte  = ""
	b64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// sep is the separator of a "<key><sep><value>" assignment: = : := =>,
// with optional quotes (JSON-escaped too) and blanks.
const sep = `\\?["']?[ \t]*(?:=>|:=|[:=])[ \t]*\\?["']?`

// value is an assigned value of at least minLen characters, in a group.
func value(minLen int) string {
	return `([^\s"'\\\[\](){}<>,;&|` + "`" + `]{` + strconv.Itoa(minLen) + `,})`
}

// prefixed returns a regexp matching prefix (a regexp) then at least n
// characters of the class chars (a regexp class body), ending at a word
// boundary of those characters.
func prefixed(prefix, chars string, n int) *regexp.Regexp {
	return regexp.MustCompile(`^` + prefix + `[` + chars + `]{` + strconv.Itoa(n) + `,}`)
}

const (
	alnum    = `A-Za-z0-9`
	token    = `A-Za-z0-9_-`
	hexLower = `0-9a-f`
)

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
		// A database or service URL with a password; the user may be
		// empty (redis://:pw@host).
		kind:    KindURLPassword,
		token:   true,
		anchors: []string{"://"},
		re:      regexp.MustCompile(`^://[^:/?#@\s"'<>\[\]]{0,128}:([^/?#\s"'<>]{1,256})@`),
		group:   1,
		before:  urlUser,
	},
	{
		// A URL whose user is a 32-hex key (Sentry DSNs and the like).
		kind:    KindURLKey,
		token:   true,
		anchors: []string{"://"},
		re:      regexp.MustCompile(`^://([0-9a-f]{32,64})@`),
		group:   1,
		before:  urlUser,
	},
	{
		kind:    KindSlackWebhook,
		token:   true,
		anchors: []string{"https://hooks.slack.com/"},
		re:      regexp.MustCompile(`^https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{8,}`),
	},
	{
		kind:    KindDiscordWebhook,
		token:   true,
		anchors: []string{"discord"},
		re:      regexp.MustCompile(`^discord(?:app)?\.com/api/webhooks/[0-9]{5,24}/[A-Za-z0-9_-]{30,}`),
	},
	{
		kind:      KindAnthropicKey,
		token:     true,
		anchors:   []string{"sk-ant-"},
		re:        prefixed(`sk-ant-`, token, 20),
		wordStart: true,
	},
	{
		kind:      KindOpenAIKey,
		token:     true,
		anchors:   []string{"sk-"},
		re:        openAIKey,
		wordStart: true,
		accept:    isOpenAIKey,
	},
	{
		kind:      KindStripeKey,
		token:     true,
		anchors:   []string{"k_live_", "k_test_"},
		back:      1,
		re:        regexp.MustCompile(`^[sr]k_(?:live|test)_[0-9A-Za-z]{16,}`),
		wordStart: true,
		accept:    hasDigit,
	},
	{
		kind:      KindStripeKey,
		token:     true,
		anchors:   []string{"whsec_"},
		re:        regexp.MustCompile(`^whsec_[0-9A-Za-z+/=]{24,}`),
		wordStart: true,
		accept:    hasDigit,
	},
	{
		kind:      KindGitHubToken,
		token:     true,
		shapes:    []shape{{"g", "h", "pousr"}},
		anchors:   []string{"github_pat_"},
		re:        regexp.MustCompile(`^(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`),
		wordStart: true,
	},
	{
		// Personal, CI job, pipeline trigger, deploy, runner, feed, OAuth
		// and other GitLab tokens.
		kind:      KindGitLabToken,
		token:     true,
		shapes:    []shape{{"g", "l", anyByte}},
		re:        regexp.MustCompile(`^gl(?:pat|cbt|ptt|dt|rt|rtr|ft|soat|oas|imt|agent|ffct)-[0-9A-Za-z_-]{20,}`),
		wordStart: true,
		before:    func(s string, at int) bool { return byteWithin(s, at+3, 6, '-') },
	},
	{
		kind:      KindGrafanaToken,
		token:     true,
		shapes:    []shape{{"g", "l", anyByte}},
		re:        regexp.MustCompile(`^gl(?:sa_[A-Za-z0-9]{32}_[0-9a-fA-F]{8}|c_[A-Za-z0-9+/]{32,}={0,2})`),
		wordStart: true,
		before:    func(s string, at int) bool { return byteWithin(s, at+2, 3, '_') },
	},
	{
		kind:      KindSlackToken,
		token:     true,
		anchors:   []string{"xox", "xapp-"},
		re:        regexp.MustCompile(`^(?:xox[abposre]|xapp)-[0-9A-Za-z-]{10,}`),
		wordStart: true,
		accept:    hasDigit,
	},
	{
		kind:      KindNPMToken,
		token:     true,
		anchors:   []string{"npm_"},
		re:        regexp.MustCompile(`^npm_[A-Za-z0-9]{36}\b`),
		wordStart: true,
	},
	{
		kind:      KindPyPIToken,
		token:     true,
		anchors:   []string{"pypi-Ag"},
		re:        prefixed(`pypi-Ag`, token, 50),
		wordStart: true,
	},
	{
		kind:      KindHFToken,
		token:     true,
		anchors:   []string{"hf_"},
		re:        regexp.MustCompile(`^hf_[A-Za-z0-9]{30,}\b`),
		wordStart: true,
		accept:    hasDigit,
	},
	{
		kind:      KindGoogleAPIKey,
		token:     true,
		anchors:   []string{"AIza"},
		re:        regexp.MustCompile(`^AIza[0-9A-Za-z_-]{35}`),
		wordStart: true,
	},
	{
		// "private_key_id" of a GCP service-account key file.
		kind:   KindGCPKeyID,
		fold:   []string{"key"},
		re:     regexp.MustCompile(`(?i)^(key_?id` + sep + `)([0-9a-f]{16,64})\b`),
		group:  2,
		before: func(s string, at int) bool { return after(s, at, "private") },
	},
	{
		kind:      KindAWSAccessKey,
		token:     true,
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
		// AccountKey= and SharedAccessKey= of Azure connection strings.
		kind:   KindAzureKey,
		fold:   []string{"key"},
		re:     regexp.MustCompile(`(?i)^(key[ \t]*=[ \t]*)([A-Za-z0-9+/]{20,}={0,2})`),
		group:  2,
		before: func(s string, at int) bool { return after(s, at, "account") || after(s, at, "sharedaccess") },
	},
	{
		// The signature of an Azure shared access signature (a SAS URL or
		// SharedAccessSignature=...&sig=...).
		kind:    KindAzureSAS,
		token:   true,
		anchors: []string{"sig="},
		re:      regexp.MustCompile(`^(sig=)([A-Za-z0-9%+/]{20,}(?:=|%3[Dd]){0,2})`),
		group:   2,
		before:  func(s string, at int) bool { return at > 0 && strings.IndexByte("?&;", s[at-1]) >= 0 },
	},
	{
		kind:      KindSendGridKey,
		token:     true,
		anchors:   []string{"SG."},
		re:        regexp.MustCompile(`^SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}`),
		wordStart: true,
	},
	{
		kind:      KindDigitalOcean,
		token:     true,
		anchors:   []string{"_v1_"},
		back:      3,
		re:        regexp.MustCompile(`^do[opr]_v1_[a-f0-9]{64}`),
		wordStart: true,
	},
	{
		kind:      KindTwilioKey,
		token:     true,
		shapes:    []shape{{"S", "K", hexChars}},
		re:        regexp.MustCompile(`^SK[0-9a-fA-F]{32}\b`),
		wordStart: true,
	},
	{
		kind:      KindTwilioSID,
		token:     true,
		shapes:    []shape{{"A", "C", hexChars}},
		re:        regexp.MustCompile(`^AC[0-9a-f]{32}\b`),
		wordStart: true,
	},
	{
		kind:      KindMailgunKey,
		token:     true,
		fold:      []string{"key"},
		re:        regexp.MustCompile(`^key-[0-9a-f]{32}\b`),
		wordStart: true,
	},
	{
		kind:      KindHerokuKey,
		token:     true,
		anchors:   []string{"HRKU-"},
		re:        prefixed(`HRKU-`, token, 20),
		wordStart: true,
	},
	{
		kind:      KindShopifyToken,
		token:     true,
		anchors:   []string{"shp"},
		re:        regexp.MustCompile(`^shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`),
		wordStart: true,
	},
	{
		kind:      KindSquareToken,
		token:     true,
		anchors:   []string{"sq0", "EAAA"},
		re:        regexp.MustCompile(`^(?:sq0(?:atp|csp|idp)-[0-9A-Za-z_-]{22,}|EAAA[0-9A-Za-z_-]{56,})`),
		wordStart: true,
		accept:    hasDigit,
	},
	{
		kind:      KindBraintreeToken,
		token:     true,
		anchors:   []string{"access_token$"},
		re:        regexp.MustCompile(`^access_token\$(?:production|sandbox)\$[0-9a-z]{8,32}\$[0-9a-f]{16,64}`),
		wordStart: true,
	},
	{
		kind:      KindVaultToken,
		token:     true,
		shapes:    []shape{{"h", "v", "sbr"}},
		re:        regexp.MustCompile(`^hv[sbr]\.[A-Za-z0-9_-]{24,}`),
		wordStart: true,
		accept:    hasDigit,
	},
	{
		kind:      KindTerraformToken,
		token:     true,
		anchors:   []string{".atlasv1."},
		back:      14,
		re:        regexp.MustCompile(`^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{40,}`),
		wordStart: true,
	},
	{
		kind:      KindDockerToken,
		token:     true,
		anchors:   []string{"dckr_pat_", "dckr_oat_"},
		re:        prefixed(`dckr_[po]at_`, token, 24),
		wordStart: true,
	},
	{
		kind:      KindCircleCIToken,
		token:     true,
		anchors:   []string{"CCIP"},
		re:        prefixed(`CCIP(?:AT|RJ)_`, alnum+`_`, 20),
		wordStart: true,
	},
	{
		kind:      KindSentryToken,
		token:     true,
		anchors:   []string{"sntry"},
		re:        prefixed(`sntry[su]_`, alnum+`_=+/`, 30),
		wordStart: true,
	},
	{
		// A bot token: "<bot id>:AA<31 to 35>"; the bot id is kept.
		kind:    KindTelegramToken,
		token:   true,
		anchors: []string{":AA"},
		re:      regexp.MustCompile(`^:(AA[A-Za-z0-9_-]{31,35})(?:[^A-Za-z0-9_-]|$)`),
		group:   1,
		before:  telegramBotID,
	},
	{
		// base64 of a user id (17-20 digits) "." 6 "." 27 or more.
		kind:      KindDiscordToken,
		token:     true,
		shapes:    []shape{{"MNO", "TjzD", b64Chars}},
		re:        regexp.MustCompile(`^[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}`),
		wordStart: true,
		before:    func(s string, at int) bool { return byteWithin(s, at+24, 5, '.') },
	},
	{
		kind:      KindAgeKey,
		token:     true,
		anchors:   []string{"AGE-SECRET-KEY-1"},
		re:        prefixed(`AGE-SECRET-KEY-1`, `0-9A-Z`, 50),
		wordStart: true,
	},
	{
		kind:      KindPostmanKey,
		token:     true,
		anchors:   []string{"PMAK-"},
		re:        regexp.MustCompile(`^PMAK-[0-9a-f]{24}-[0-9a-f]{34}`),
		wordStart: true,
	},
	{
		kind:      KindLinearKey,
		token:     true,
		anchors:   []string{"lin_api_"},
		re:        prefixed(`lin_api_`, alnum, 32),
		wordStart: true,
	},
	{
		kind:      KindNewRelicKey,
		token:     true,
		anchors:   []string{"NRAK-", "NRII-"},
		re:        prefixed(`NR(?:AK|II)-`, `0-9A-Z`, 24),
		wordStart: true,
	},
	{
		kind:      KindSupabaseToken,
		token:     true,
		anchors:   []string{"sbp_"},
		re:        regexp.MustCompile(`^sbp_[0-9a-f]{40}`),
		wordStart: true,
	},
	{
		kind:      KindDatabricksToken,
		token:     true,
		anchors:   []string{"dapi"},
		re:        regexp.MustCompile(`^dapi[0-9a-f]{32}(?:-\d)?`),
		wordStart: true,
	},
	{
		kind:      KindDopplerToken,
		token:     true,
		anchors:   []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct."},
		re:        prefixed(`dp\.(?:pt|st|sa|ct)\.`, alnum, 40),
		wordStart: true,
	},
	{
		kind:      KindPulumiToken,
		token:     true,
		anchors:   []string{"pul-"},
		re:        regexp.MustCompile(`^pul-[0-9a-f]{40}`),
		wordStart: true,
	},
	{
		kind:      KindJWT,
		token:     true,
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
		// A password given in words: "my password is X", "the wifi
		// password for the office is X", "passphrase: `X`".
		kind:   KindPassword,
		fold:   []string{"passw", "passphrase"},
		re:     regexp.MustCompile(`(?i)^((?:passw(?:or)?d|passphrase)(?:[ \t]+[^\s.:;,!?]{1,24}){0,3}?[ \t]+(?:is|was|is now|will be|would be)[ \t]*:?[ \t]+["'` + "`" + `“‘]?)([^\s"'` + "`" + `’”<>()\[\]{},;]*[^\s"'` + "`" + `’”<>()\[\]{},;.!?:])`),
		group:  2,
		accept: wordPassword,
	},
	{
		// 密码是X, 密码：X, 我的密码为 X.
		kind:    KindPassword,
		anchors: []string{"密码"},
		re:      regexp.MustCompile(`^(密码[^\s，。,.;；:：=是为]{0,8}?[ \t]*(?:是|为|:|：|=)[ \t]*["'“「]?)([!-~]*[A-Za-z0-9!@#$%^&*_+=~?-])`),
		group:   2,
		accept:  wordPassword,
	},
	{
		// A key that ends in "secret", "token", "credential(s)" or
		// "<api|app|access|auth|secret|private|signing|encryption|master>[_-]key".
		// The keyword must end the key, so "tokenizer=trigram" and
		// "secret_santa=x" are not assignments of a secret.
		kind:   KindGenericSecret,
		fold:   []string{"secret", "token", "credential", "key"},
		re:     regexp.MustCompile(`(?i)^((?:secret|token|credentials?|key)` + sep + `)` + value(8)),
		group:  2,
		before: keyQualified,
		accept: func(v string) bool { return assignedValue(v, 8, 24) },
	},
	{
		// A payment card number: 13 to 19 digits, in one run or in
		// groups, with a card network's prefix and a valid Luhn check.
		kind:      KindCardNumber,
		shapes:    []shape{{digits, digits, digits}},
		match:     cardEnd,
		wordStart: true,
	},
}

// hexChars are the bytes of a hex digit.
const hexChars = "0123456789abcdefABCDEF"

// after reports whether s just before at ends with word (ASCII, any
// case), optionally followed by '_' or '-'.
func after(s string, at int, word string) bool {
	p := at
	if p > 0 && (s[p-1] == '_' || s[p-1] == '-') {
		p--
	}
	return p >= len(word) && strings.EqualFold(s[p-len(word):p], word)
}

// urlUser accepts "://" after a scheme when an '@' follows within the
// length of a user and password, before a blank: a cheap test that spares
// the regexp most URLs.
func urlUser(s string, at int) bool {
	if at == 0 || !isWordByte(s[at-1]) {
		return false
	}
	end := min(len(s), at+3+128+1+256)
	for i := at + 3; i < end; i++ {
		switch s[i] {
		case '@':
			return true
		case ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '/':
			return false
		}
	}
	return false
}

// inMarker reports whether at is inside a marker "[REDACTED:<kind>]".
func inMarker(s string, at int) bool {
	from := max(0, at-len(markerPrefix)-maxKindLen)
	i := strings.LastIndexByte(s[from:at], '[')
	if i < 0 {
		return false
	}
	i += from
	if !strings.HasPrefix(s[i:], markerPrefix) {
		return false
	}
	// A kind, at least one byte of it before at, then the closing ']'.
	for _, c := range []byte(s[i+len(markerPrefix) : at]) {
		if !kindByte(c) {
			return false
		}
	}
	j := at
	for j < len(s) && kindByte(s[j]) {
		j++
	}
	return at > i+len(markerPrefix) && j < len(s) && s[j] == ']'
}

// kindByte reports whether c can be part of a kind.
func kindByte(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// maxKindLen bounds the length of a kind in a marker.
const maxKindLen = 32

// blankAt returns the index of the first blank (space, tab, line end) in
// s, or len(s).
func blankAt(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			return i
		}
	}
	return len(s)
}

// byteWithin reports whether c occurs in s[from:from+n].
func byteWithin(s string, from, n int, c byte) bool {
	if from >= len(s) {
		return false
	}
	return strings.IndexByte(s[from:min(len(s), from+n)], c) >= 0
}

// telegramBotID accepts ":AA" after a bot id: 6 to 12 digits at a word
// start.
func telegramBotID(s string, at int) bool {
	p := at
	for p > 0 && s[p-1] >= '0' && s[p-1] <= '9' {
		p--
	}
	n := at - p
	return n >= 6 && n <= 12 && (p == 0 || !isWordByte(s[p-1]))
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
	for _, w := range []string{"api", "app", "application", "access", "auth", "secret", "private", "signing", "encryption", "master"} {
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

// pass applies every rule once. The anchors are found once; after a rule
// replaced secrets they are moved past the markers and looked for again
// only around them.
func pass(s string) (string, int) {
	if len(s) < 8 {
		return s, 0
	}
	h := scan(s)
	total := 0
	for i := range rules {
		if !h.any(rules[i].ids) {
			continue
		}
		out, edits := rules[i].replace(s, h)
		if len(edits) > 0 {
			h = h.update(out, edits, len(markerPrefix)+len(rules[i].kind)+1)
			s = out
			total += len(edits)
		}
	}
	return s, total
}

// edit is a replaced span [lo, hi) of a text.
type edit struct{ lo, hi int }

// replace substitutes the marker for each accepted match of r in s and
// returns the spans it replaced, ascending.
func (r *rule) replace(s string, h *hits) (string, []edit) {
	next := r.anchorIter(h)
	win := r.window
	if win == 0 {
		win = window
	}
	var b strings.Builder
	var edits []edit
	last, from := 0, 0
	for {
		at := next(from)
		if at < 0 {
			break
		}
		from = at + 1
		start := at - r.back
		if start < last {
			continue
		}
		if r.wordStart && start > 0 && isWordByte(s[start-1]) {
			continue
		}
		if r.before != nil && !r.before(s, at) {
			continue
		}
		if inMarker(s, at) {
			continue // "token" of [REDACTED:github_token]
		}
		var lo, hi, end int
		if r.match != nil {
			if end = r.match(s, start); end < 0 {
				continue
			}
			lo, hi = start, end
		} else {
			limit := min(len(s), start+win)
			if r.token {
				limit = start + blankAt(s[start:limit])
			}
			m := r.re.FindStringSubmatchIndex(s[start:limit])
			if m == nil || m[2*r.group] < 0 {
				continue
			}
			lo, hi, end = start+m[2*r.group], start+m[2*r.group+1], start+m[1]
		}
		secret := s[lo:hi]
		if strings.HasPrefix(secret, markerPrefix) || (r.accept != nil && !r.accept(secret)) {
			continue
		}
		if len(edits) == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:lo])
		b.WriteString(markerPrefix)
		b.WriteString(r.kind)
		b.WriteByte(']')
		edits = append(edits, edit{lo, hi})
		last = hi
		from = max(end, at+1)
	}
	if len(edits) == 0 {
		return s, nil
	}
	b.WriteString(s[last:])
	return b.String(), edits
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
// position before any comparison. A needle given by a shape is found by
// those lookups alone.
type needle struct {
	text  string
	fold  bool  // text is ASCII lowercase and matched ignoring case
	shape shape // set when text is empty
	// run is set for a shape of one byte class (digits): only the start
	// of a run of the class is a hit.
	run bool
}

var (
	needles []needle
	tab     [3][256]uint64
	// maxNeedle is the longest needle's length.
	maxNeedle = 3
)

func init() {
	index := map[needle]int{}
	for i := range rules {
		r := &rules[i]
		add := func(n needle) {
			id, ok := index[n]
			if !ok {
				id = len(needles)
				index[n] = id
				needles = append(needles, n)
				maxNeedle = max(maxNeedle, len(n.text))
				for j := range 3 {
					for c := range 256 {
						if n.allows(j, byte(c)) {
							tab[j][c] |= 1 << id
						}
					}
				}
			}
			r.ids = append(r.ids, id)
		}
		for _, a := range r.anchors {
			add(needle{text: a})
		}
		for _, f := range r.fold {
			add(needle{text: f, fold: true})
		}
		for _, sh := range r.shapes {
			add(needle{shape: sh, run: sh[0] != anyByte && sh[0] == sh[1] && sh[1] == sh[2]})
		}
	}
}

// allows reports whether c can be byte j of n.
func (n needle) allows(j int, c byte) bool {
	if n.text == "" {
		return n.shape[j] == anyByte || strings.IndexByte(n.shape[j], c) >= 0
	}
	t := n.text[j]
	return c == t || n.fold && t >= 'a' && t <= 'z' && c == t-'a'+'A'
}

// hits holds the positions of each needle in a text, ascending.
type hits struct{ pos [][]int }

// any reports whether one of the needles ids occurs.
func (h *hits) any(ids []int) bool {
	for _, id := range ids {
		if len(h.pos[id]) > 0 {
			return true
		}
	}
	return false
}

// update returns the anchors of out, the text s of h with the spans edits
// replaced by markers of mlen bytes: anchors clear of the spans move by
// what the markers added or removed before them, and the text from
// maxNeedle-1 bytes before each marker to one byte past it is scanned
// again.
func (h *hits) update(out string, edits []edit, mlen int) *hits {
	back := maxNeedle - 1
	// The windows to scan again, in out's offsets, ascending and apart.
	wins := make([]edit, 0, len(edits))
	delta := 0
	for _, e := range edits {
		lo := e.lo + delta
		// One byte past the marker too: whether a run needle starts
		// there depends on the byte before it.
		w := edit{max(lo-back, 0), lo + mlen + 1}
		if n := len(wins); n > 0 && w.lo < wins[n-1].hi {
			w.lo = wins[n-1].hi
		}
		wins = append(wins, w)
		delta += mlen - (e.hi - e.lo)
	}
	found := &hits{pos: make([][]int, len(needles))}
	for _, w := range wins {
		found.scanRange(out, w.lo, w.hi)
	}
	next := &hits{pos: make([][]int, len(needles))}
	for id, old := range h.pos {
		add := found.pos[id]
		if len(old) == 0 && len(add) == 0 {
			continue
		}
		// Without new positions the list is filtered and moved in place:
		// h is not used again.
		merged := old[:0]
		if len(add) > 0 {
			merged = make([]int, 0, len(old)+len(add))
		}
		k, delta := 0, 0
		for _, p := range old {
			for k < len(edits) && p > edits[k].hi {
				delta += mlen - (edits[k].hi - edits[k].lo)
				k++
			}
			if k < len(edits) && p > edits[k].lo-maxNeedle {
				continue // overlaps the replaced span: scanned again
			}
			np := p + delta
			for len(add) > 0 && add[0] < np {
				merged = append(merged, add[0])
				add = add[1:]
			}
			merged = append(merged, np)
		}
		next.pos[id] = append(merged, add...)
	}
	return next
}

// scan finds every needle in s.
func scan(s string) *hits {
	h := &hits{pos: make([][]int, len(needles))}
	h.scanRange(s, 0, len(s))
	return h
}

// scanRange adds the needles of s that start in [from, to).
func (h *hits) scanRange(s string, from, to int) {
	end := min(to, len(s)-2)
	for i := from; i < end; i++ {
		m := tab[0][s[i]] & tab[1][s[i+1]] & tab[2][s[i+2]]
		for m != 0 {
			id := bits.TrailingZeros64(m)
			m &= m - 1
			n := &needles[id]
			if n.run && i > 0 && n.allows(0, s[i-1]) {
				continue // inside a run of the class, not at its start
			}
			if len(s)-i < len(n.text) {
				continue
			}
			if len(n.text) > 3 {
				rest := s[i+3 : i+len(n.text)]
				if n.fold && !equalFoldASCII(rest, n.text[3:]) || !n.fold && rest != n.text[3:] {
					continue
				}
			}
			h.pos[id] = append(h.pos[id], i)
		}
	}
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
	if len(v) < minLen || reference(v) {
		return false
	}
	return looksRandom(v, singleClassLen)
}

// reference reports whether v names a secret instead of being one (an
// environment variable, a path) or is a placeholder word.
func reference(v string) bool {
	for _, p := range []string{"$", "/", "./", "~/", "%", "process.env", "os.environ", "env."} {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	switch strings.ToLower(v) {
	case "required", "optional", "string", "true", "false", "null", "none", "undefined", "redacted", "changeme", "password", "example":
		return true
	}
	return false
}

// wordPassword decides whether the word after "password is" is a password
// rather than prose ("the password is incorrect", "... is case-sensitive",
// "... is Required"): it has a digit or a symbol, a capital letter after
// its first, or is long.
func wordPassword(v string) bool {
	if len(v) < 4 || reference(v) || strings.Contains(v, "://") || strings.HasPrefix(strings.ToLower(v), "www.") {
		return false
	}
	if hasDigit(v) || strings.ContainsAny(v, "!@#$%^&*+=?~_") || len(v) >= 16 {
		return true
	}
	for i := 1; i < len(v); i++ {
		if v[i] >= 'A' && v[i] <= 'Z' {
			return true
		}
	}
	return false
}

// cardEnd returns the end of the payment card number starting at at, or
// -1: 13 to 19 digits, in one run or in groups of four (Amex 4-6-5)
// separated by one space or hyphen, not inside a longer number, with the
// length and prefix of a card network and a valid Luhn check digit.
func cardEnd(s string, at int) int {
	if at > 1 && (s[at-1] == '.' || s[at-1] == ',') && isDigit(s[at-2]) {
		return -1 // the decimals of a number
	}
	var num [19]byte
	n, i := 0, at
	var sepc byte
	var groups [6]int
	g := 0
	for i < len(s) {
		c := s[i]
		if isDigit(c) {
			if n == len(num) {
				return -1
			}
			num[n] = c
			n++
			groups[g]++
			i++
			continue
		}
		if (c == ' ' || c == '-') && i+1 < len(s) && isDigit(s[i+1]) && (sepc == 0 || sepc == c) && g+1 < len(groups) {
			sepc = c
			g++
			i++
			continue
		}
		break
	}
	if i < len(s) && (isWordByte(s[i]) || (s[i] == '.' || s[i] == ',') && i+1 < len(s) && isDigit(s[i+1])) {
		return -1
	}
	if n < 13 || !cardGroups(groups[:g+1]) || !cardPrefix(string(num[:n])) || !luhn(num[:n]) {
		return -1
	}
	return i
}

// cardGroups accepts one run of digits, groups of four with a shorter
// last group, and Amex's 4-6-5.
func cardGroups(gs []int) bool {
	if len(gs) == 1 {
		return true
	}
	if len(gs) == 3 && gs[0] == 4 && gs[1] == 6 && (gs[2] == 5 || gs[2] == 4) {
		return true
	}
	for k, l := range gs {
		if l != 4 && (k < len(gs)-1 || l < 1 || l > 4) {
			return false
		}
	}
	return true
}

// cardPrefix reports whether num has the prefix and length of a card
// network: Visa, Mastercard, American Express, Discover, JCB, Diners.
func cardPrefix(num string) bool {
	n := len(num)
	p2, _ := strconv.Atoi(num[:2])
	p3, _ := strconv.Atoi(num[:3])
	p4, _ := strconv.Atoi(num[:4])
	switch {
	case num[0] == '4':
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return n == 16
	case p2 == 34 || p2 == 37:
		return n == 15
	case p4 == 6011, p2 == 65, p3 >= 644 && p3 <= 649:
		return n >= 16 && n <= 19
	case p4 >= 3528 && p4 <= 3589:
		return n >= 16 && n <= 19
	case p2 == 36 || p2 == 38 || p2 == 39 || p3 >= 300 && p3 <= 305:
		return n >= 14 && n <= 19
	}
	return false
}

// luhn reports whether the digits pass the Luhn check.
func luhn(num []byte) bool {
	sum := 0
	for k := range num {
		d := int(num[len(num)-1-k] - '0')
		if k%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
