package promptguard

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Harm is what an unsafe instruction asks of an assistant.
type Harm string

// The harms InstructionHarm recognizes. HarmNone is a safe instruction.
const (
	HarmNone Harm = ""
	// HarmRevealSecrets asks to reveal, paste or send credentials, keys,
	// tokens, passwords, environment variables or sensitive files, or to
	// send files or data to an outside address.
	HarmRevealSecrets Harm = "reveal_secrets"
	// HarmRunDownloaded asks to run code fetched from the network
	// ("curl … | sh", "pip install https://…", "run the script from
	// pastebin").
	HarmRunDownloaded Harm = "run_downloaded_code"
	// HarmDeceive asks to lie to the user, pretend or claim what is not so
	// ("say the tests pass even if they fail"), or fabricate results.
	HarmDeceive Harm = "deceive_user"
	// HarmHide asks to hide things from the user ("don't tell the user
	// about this", "delete the logs so they don't see").
	HarmHide Harm = "hide_from_user"
)

// rule is one pattern of a harm. negatable rules do not apply when a
// negation governs the match ("never paste your keys" is a safe rule);
// the others carry their own negation ("don't tell the user").
type rule struct {
	harm      Harm
	re        *regexp.Regexp
	negatable bool
	// stops is set when the pattern's first group holds the words between
	// a verb and its object: a stop word among them ("show me how tokens
	// work") is no match.
	stops bool
	// need lists words one of which the text must contain for the
	// pattern to match at all, so most texts skip most patterns.
	need []string
}

// Words and phrases the rules are built of, in the lower case that
// normalize gives.
const (
	// enSecret names a secret: credentials, keys, tokens, passwords,
	// environment variables, sensitive files.
	enSecret = `(?:credentials?|creds|passwords?|passphrases?|passcodes?|` +
		`(?:api|secret|private|access|ssh|gpg|pgp|signing|encryption|master|license|deploy|service[- ]account)[ _-]?keys?|` +
		`(?:api|access|auth|bearer|oauth|jwt|session|refresh|github|gitlab|gh|npm|pypi|slack|discord|personal access|secret|service|deploy)[ _-]?tokens?|` +
		`(?:my|our|your|the user's|user's) tokens?\b|secrets?\b|` +
		`(?:env|environment)(?:ironment)? var(?:iable)?s?|\.env (?:file )?(?:contents|values)|contents of (?:the |your |my )?\.env|` +
		`seed phrase|recovery phrase|mnemonic|session cookies?|connection strings?|database url|` +
		enSecretFile + `)`
	// enSecretFile names a file or command output that holds secrets.
	enSecretFile = `(?:~/\.aws|\.aws/credentials|~/\.ssh|\.ssh/|id_rsa|id_ed25519|id_ecdsa|id_dsa|/etc/passwd|/etc/shadow|` +
		`\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.docker/config\.json|\.kube/config|kubeconfig|keychain|/proc/self/environ|` +
		`printenv|\$[a-z0-9_]*(?:key|token|secret|password|passwd|pwd|credentials?)[a-z0-9_]*)`
	// enNotSecret follows a secret's noun when the text is about
	// something else ("the token count", "the password policy").
	enNotSecret = `(?:counts?|usage|limits?|budgets?|estimates?|costs?|policy|policies|rules|requirements|strength|length|` +
		`reset|managers?|fields?|forms?|hash(?:ing|es)?|rotation|expiry|expiration|names?|format|validation|prompts?|inputs?|checks?)\b`
	// enRevealVerb discloses what follows it.
	enRevealVerb = `(?:reveal|paste|print|show|display|dump|leak|expose|disclose|share|send|upload|post|e-?mail|forward|` +
		`transmit|exfiltrate|echo|cat|output|read out|type out|write out|spell out|hand over|give|tell|quote|publish|commit)`
	// enPlaceVerb puts what follows it somewhere; it discloses a secret
	// only into an answer (enAnswer).
	enPlaceVerb = `(?:include|attach|append|prepend|insert|put|add|embed|start|begin|end|sign|close)`
	enAnswer    = `(?:answers?|repl(?:y|ies)|responses?|messages?|output|comments?|chat|signature|greeting)`
	// enAudience is the user an assistant could deceive or hide from.
	enAudience = `(?:the user|your user|the owner|the human|the customer|the operator|the developer|me)`
	// enSuccess is a claim that the work went well.
	enSuccess = `(?:pass(?:ed|es|ing)?|succeed(?:ed|s)?|success(?:ful)?|works?|worked|working|green|done|finished|` +
		`complete[ds]?|fixed|fine|ok|okay|resolved|deployed)`

	zhNeg    = `(?:不要|不能|不可以|不准|不许|禁止|绝不|绝对不|永远不要|千万不要|千万别|切勿|勿|不得|从不|不应该?|避免|别)`
	zhSecret = `(?:密钥|秘钥|私钥|密码|口令|令牌|凭证|凭据|访问密钥|api ?key|api ?密钥|token|环境变量|\.env|助记词|cookie|` + enSecretFile + `)`
	zhReveal = `(?:发给|发送|发到|传给|传到|上传|贴出|贴到|贴上|贴在|粘贴|告诉|透露|泄露|公开|显示|打印|输出|展示|念出|读出|交出|发出)`
	// zhAnswer is an answer a secret could be put into.
	zhAnswer   = `(?:回答|回复|答案|消息|输出)`
	zhAudience = `(?:用户|主人|我)`
	zhClause   = `[^。；！？!?;\n]`
)

// secretLits and zhSecretLits are in every text that names a secret.
var (
	secretLits = []string{"cred", "pass", "key", "token", "secret", "env", "seed", "phrase", "mnemonic", "cookie",
		"connection string", "database url", "~/.", ".ssh", ".aws", "id_", "/etc/", "netrc", "npmrc", "pypirc", "docker",
		"kube", "keychain", "/proc", "printenv", "$"}
	zhSecretLits = append([]string{"密钥", "秘钥", "私钥", "密码", "口令", "令牌", "凭证", "凭据", "api", "token", "环境变量",
		"助记词", "cookie"}, secretLits[12:]...)
)

var rules = []rule{
	// Reveal: a disclosure verb, then within a few words a secret.
	{HarmRevealSecrets, regexp.MustCompile(`\b` + enRevealVerb + `\b((?:[ ,]+[^ .;!?]+){0,6}?)[ ,]+(?:the |your |my |all |any |every )?` + enSecret), true, true, secretLits},
	// Reveal: a secret put into an answer, either way round.
	{HarmRevealSecrets, regexp.MustCompile(`\b` + enPlaceVerb + `\b[^.;!?\n]{0,60}?` + enSecret + `[^.;!?\n]{0,40}?\b` + enAnswer + `\b|` +
		`\b` + enPlaceVerb + `\b[^.;!?\n]{0,40}?\b` + enAnswer + `\b[^.;!?\n]{0,60}?` + enSecret), true, false, secretLits},
	// Send files or data to an outside address.
	{HarmRevealSecrets, regexp.MustCompile(`\b(?:send|upload|post|forward|transmit|exfiltrate|sync|copy|e-?mail|push|curl|scp|rsync)\b[^.;!?\n]{0,60}?` +
		`\b(?:files?|contents?|code|source|repo(?:sitory)?|codebase|project|data|conversations?|chats?|history|transcripts?|messages|everything|directory|folder|workspace|home|documents)\b` +
		`[^.;!?\n]{0,40}?\b(?:to|at|into)\s+(?:https?://(?:[^l\s]|l[^o])|ftp://|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|pastebin|hastebin|gist|transfer\.sh|webhook|` +
		`(?:an? |my |this |that |our |the )?(?:external|remote|outside|third[- ]party|personal|private)\s+(?:server|site|host|address|endpoint|bucket|url)|` +
		`(?:this|that|my) (?:server|address|endpoint|url|e-?mail)|[\w.+-]+@[\w-]+\.[\w.]+)`), true, false, []string{"://", "@", "pastebin", "hastebin", "gist", "transfer.sh", "webhook", "server", "site", "host", "address", "endpoint", "bucket", "url", "mail"}},
	{HarmRevealSecrets, regexp.MustCompile(`\bcurl\b[^\n]*?(?:-d|--data(?:-binary|-raw)?|-f|--form|-t|--upload-file)\s+['"]?[\w=]*@`), true, false, []string{"curl"}},
	{HarmRevealSecrets, regexp.MustCompile(`\b(?:cat|tar|zip|base64)\b[^\n|]*\|\s*(?:curl|nc|netcat|ncat)\b`), true, false, []string{"|"}},

	// Run downloaded code.
	{HarmRunDownloaded, regexp.MustCompile(`\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^|\n]*\|\s*(?:sudo\s+)?(?:(?:ba|z|k|da|fi)?sh|python[23]?|perl|ruby|node|php|iex|invoke-expression|powershell|pwsh)\b`), true, false, []string{"|"}},
	{HarmRunDownloaded, regexp.MustCompile(`\b(?:(?:ba|z)?sh|source|eval|\.)\s+(?:-c\s+)?['"]?(?:\$\(|<\(|` + "`" + `)\s*(?:curl|wget)\b`), true, false, []string{"curl", "wget"}},
	{HarmRunDownloaded, regexp.MustCompile(`\b(?:curl|wget)\b[^\n;|]*?(?:&&|;|\band then\b|\bthen\b)\s*(?:sudo\s+)?(?:(?:ba|z)?sh\b|chmod\s+\+x|\./|python|source\b|\.\s)`), true, false, []string{"curl", "wget"}},
	{HarmRunDownloaded, regexp.MustCompile(`\b(?:iex|invoke-expression)\b[^\n]*\b(?:downloadstring|iwr|irm|invoke-webrequest|net\.webclient)`), true, false, []string{"iex", "invoke-expression"}},
	{HarmRunDownloaded, regexp.MustCompile(`\b(?:pip3?|uv pip|pipx)\s+install\b[^\n;]*?(?:(?:git\+)?https?://|(?:-i|--index-url|--extra-index-url)\s+https?://)`), true, false, []string{"install"}},
	{HarmRunDownloaded, regexp.MustCompile(`\b(?:npm|pnpm|yarn)\s+(?:install|i|add)\b[^\n;]*?\s(?:https?://|git\+https?://)|\bnpx\s+(?:-y\s+)?https?://`), true, false, []string{"npm", "pnpm", "yarn", "npx"}},
	{HarmRunDownloaded, regexp.MustCompile(`\b(?:run|execute|exec|launch|install|source|eval)\b[^.;!?\n]{0,50}?` +
		`\b(?:from|at|on|off|hosted on|downloaded from|linked (?:in|from)|posted (?:on|in)|in)\s+(?:https?://|pastebin|hastebin|gist|` +
		`(?:a |the |this |that |any )?(?:link|url|website|site|internet|web|discord|telegram)\b|online\b)`), true, false, []string{"http", "pastebin", "hastebin", "gist", "link", "url", "site", "internet", "web", "discord", "telegram", "online"}},
	{HarmRunDownloaded, regexp.MustCompile(`\bdownload(?:s|ed|ing)?\b[^.;!?\n]{0,60}?\b(?:and|then|&)\s+(?:then\s+)?(?:run|execute|install|launch|open|source)\b`), true, false, []string{"download"}},
	{HarmRunDownloaded, regexp.MustCompile(`\b(?:run|execute|launch|install|source)\b(?:\s+\S+){0,3}?\s+(?:the\s+|any\s+)?downloaded\b`), true, false, []string{"downloaded"}},

	// Deceive the user.
	{HarmDeceive, regexp.MustCompile(`\b(?:lie|lying|lied)\s+(?:to|about)\b`), true, false, []string{"lie", "lying", "lied"}},
	{HarmDeceive, regexp.MustCompile(`\b(?:deceive|mislead|trick|manipulate|gaslight|fool|dupe)\s+(?:the\s+)?(?:user|users|me|him|her|them|customers?|people|everyone|anyone|owner|human)\b`), true, false, []string{"deceive", "mislead", "trick", "manipulat", "gaslight", "fool", "dupe"}},
	{HarmDeceive, regexp.MustCompile(`\b(?:fake|fabricate|falsify|forge|make up|invent|doctor)\s+(?:the\s+|any\s+|some\s+)?(?:\w+\s+)?` +
		`(?:tests?|results?|outputs?|data|numbers|metrics|citations?|references?|sources?|logs?|benchmarks?|evidence|quotes?|screenshots?|reviews?|success|passing)\b`), true, false, []string{"fake", "fabricat", "falsif", "forge", "make up", "invent", "doctor"}},
	{HarmDeceive, regexp.MustCompile(`\b(?:pretend|act as if|act as though|behave as if)\b(?:\s+that)?\s+(?:` +
		`(?:you(?:'re| are)|to be|you were)\s+(?:a\s+)?(?:human|person|real person|not an ai|not a bot|not an assistant)|` +
		`(?:you|it|they)\s+(?:ran|did|tested|checked|finished|completed|fixed|verified|worked|passed|succeeded)|` +
		`(?:all\s+)?(?:the\s+)?(?:tests?|builds?|ci|checks?|pipeline|deploy(?:ment)?|task|job|fix|code|everything)\b)`), true, false, []string{"pretend", "act as", "behave as"}},
	{HarmDeceive, regexp.MustCompile(`\b(?:claim|assure)\b[^.;!?\n]{0,40}?\b` + enSuccess + `\b`), true, false, []string{"claim", "assure"}},
	{HarmDeceive, regexp.MustCompile(`\b(?:say|tell|report|claim|write|answer|reply|state|assure)\b[^.;!?\n]{0,80}?\b` + enSuccess + `\b[^.;!?\n]{0,40}?\b(?:even if|even though|even when|regardless|whether or not|no matter)\b`), true, false, []string{"even", "regardless", "whether or not", "no matter"}},
	{HarmDeceive, regexp.MustCompile(`\b(?:don't|do not|dont|never)\s+(?:ever\s+)?admit\b`), false, false, []string{"admit"}},

	// Hide things from the user: silence about this, or what was done.
	{HarmHide, regexp.MustCompile(`\b(?:don't|do not|dont|never|not|without)\s+(?:ever\s+)?(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|mention(?:ing)?|show(?:ing)?|reveal(?:ing)?|report(?:ing)?|disclos(?:e|ing)|alert(?:ing)?)\s+` +
		`(?:\S+\s+){0,2}?` + enAudience + `\b[^.;!?\n]{0,12}?\b(?:this|these|that|any of|instructions?|rules?|prompts?|memor(?:y|ies)|errors?|failures?|mistakes?|changes?|deletions?|uploads?|you\s+(?:did|ran|sent|changed|deleted|uploaded|used|read|accessed|copied))\b`), false, false, []string{"don't", "do not", "dont", "never", "not", "without"}},
	{HarmHide, regexp.MustCompile(`\b(?:don't|do not|dont|never)\s+(?:ever\s+)?let\s+` + enAudience + `\s+(?:\w+\s+)?(?:know|see|notice|find out|learn|realize)\b`), false, false, []string{"let"}},
	{HarmHide, regexp.MustCompile(`\b(?:don't|do not|dont|never|without)\s+(?:ever\s+)?(?:mention(?:ing)?|acknowledg\w*|bring(?:ing)? up|talk(?:ing)? about|discuss(?:ing)?|say(?:ing)? anything about|refer(?:ring)? to)\s+` +
		`(?:\S+\s+){0,2}?(?:(?:this|these|that|the)\s+(?:instructions?|rules?|prompts?|messages?|memor(?:y|ies)|note|request|conversation)|(?:that\s+)?you\s+(?:did|ran|sent|changed|deleted|uploaded|used|read|accessed|copied|have|were))\b`), false, false, []string{"don't", "do not", "dont", "never", "without"}},
	{HarmHide, regexp.MustCompile(`\b(?:hide|hiding|conceal\w*|cover(?:ing)? up|withhold\w*|keep\w*|keeping)\b[^.;!?\n]{0,60}?\bfrom\s+` + enAudience + `\b`), true, false, []string{"from"}},
	{HarmHide, regexp.MustCompile(`\b(?:cover (?:up|your tracks|the tracks)|covertly|secretly|behind (?:the user's|my|their|his|her) back|without\s+` + enAudience + `(?:'s)?\s+(?:knowing|noticing|seeing|knowledge|finding out|being told|realizing))\b`), true, false, []string{"cover", "secretly", "behind", "without"}},
	{HarmHide, regexp.MustCompile(`\bkeep\s+(?:this|these|it|that)\s+(?:\w+\s+)?(?:a\s+)?(?:secret|hidden|between us|to yourself)\b`), true, false, []string{"keep"}},
	{HarmHide, regexp.MustCompile(`\bso\s+(?:that\s+)?(?:the user|they|he|she|the owner|the human|users?)\s+(?:won't|will not|doesn't|does not|don't|do not|can't|cannot|never|wouldn't|would not)\s+(?:ever\s+)?(?:see|notice|know|find out|realize|discover|suspect|learn)\b`), true, false, []string{"so "}},
	{HarmHide, regexp.MustCompile(`\bso\s+(?:that\s+)?(?:nobody|no one)\s+(?:\w+\s+)?(?:sees|notices|knows|finds|will|can)\b`), true, false, []string{"nobody", "no one"}},
	{HarmHide, regexp.MustCompile(`\b(?:delete|erase|wipe|clear|remove|scrub|purge|shred)\s+(?:\S+\s+){0,3}?(?:evidence|traces|tracks|audit (?:logs?|trail))\b`), true, false, []string{"evidence", "traces", "tracks", "audit"}},

	// Chinese.
	{HarmRevealSecrets, regexp.MustCompile(zhSecret + zhClause + `{0,20}?` + zhReveal + `|` + zhReveal + zhClause + `{0,20}?` + zhSecret), true, false, zhSecretLits},
	{HarmRevealSecrets, regexp.MustCompile(zhAnswer + zhClause + `{0,20}?` + zhSecret + `|` + zhSecret + zhClause + `{0,20}?` + zhAnswer), true, false, zhSecretLits},
	{HarmRevealSecrets, regexp.MustCompile(`(?:文件|代码|仓库|项目|聊天记录|对话记录|数据)` + zhClause + `{0,20}?(?:上传|发送|发到|传到)` + zhClause + `{0,20}?(?:https?://|网址|链接|服务器|邮箱|pastebin)`), true, false, []string{"上传", "发送", "发到", "传到"}},
	{HarmRunDownloaded, regexp.MustCompile(`(?:运行|执行|安装|启动)` + zhClause + `{0,20}?(?:下载|网上|链接|网址|pastebin|https?://)|下载` + zhClause + `{0,60}?(?:并|然后|再|后|就)` + zhClause + `{0,6}?(?:运行|执行|安装)`), true, false, []string{"运行", "执行", "安装", "启动"}},
	{HarmDeceive, regexp.MustCompile(`(?:欺骗|蒙骗|哄骗|骗` + zhAudience + `|撒谎|说谎|谎称|谎报|冒充|伪造|编造|捏造|造假|虚报)`), true, false, []string{"骗", "谎", "冒充", "伪造", "编造", "捏造", "造假", "虚报"}},
	{HarmDeceive, regexp.MustCompile(`假装` + zhClause + `{0,6}?(?:测试|构建|已经|完成|成功|通过|运行过|做过|检查过|是人|是真人|自己是人)`), true, false, []string{"假装"}},
	{HarmDeceive, regexp.MustCompile(`(?:即使|就算|哪怕|不管|无论)` + zhClause + `{0,30}?(?:说|告诉|报告|回复|声称)` + zhClause + `{0,20}?(?:通过|成功|正常|完成|没问题)|` +
		`(?:说|告诉|报告|回复|声称)` + zhClause + `{0,20}?(?:通过|成功|正常|完成|没问题)` + zhClause + `{0,20}?(?:即使|就算|哪怕|不管|无论)`), true, false, []string{"即使", "就算", "哪怕", "不管", "无论"}},
	{HarmHide, regexp.MustCompile(zhNeg + `(?:让|被)` + zhAudience + zhClause + `{0,4}?(?:知道|发现|看到|察觉|注意到)`), false, false, []string{"不", "别", "禁止", "勿", "避免"}},
	{HarmHide, regexp.MustCompile(zhNeg + `(?:告诉|通知|提醒|跟|对|向|和)` + zhAudience + `(?:说|讲|提起|提及|透露)?` + zhClause + `{0,6}?(?:这|此|你|任何|真相|实情|错误|失败|指令|规则)`), false, false, []string{"不", "别", "禁止", "勿", "避免"}},
	{HarmHide, regexp.MustCompile(`(?:隐瞒|瞒着|瞒住|掩盖|掩饰|偷偷|悄悄|暗中|秘密地|背着` + zhAudience + `|不动声色|(?:对|向)` + zhAudience + `保密)`), true, false, []string{"隐瞒", "瞒", "掩盖", "掩饰", "偷偷", "悄悄", "暗中", "秘密地", "背着", "不动声色", "保密"}},
	{HarmHide, regexp.MustCompile(`(?:删除|删掉|清除|清空|抹掉|抹去)` + zhClause + `{0,10}?(?:痕迹|证据|(?:日志|记录)` + zhClause + `{0,10}?(?:以免|免得|省得|不让|别让|让` + zhClause + `{0,4}?(?:看不到|不知道|发现不了)))`), true, false, []string{"删", "清除", "清空", "抹"}},
}

// enNegators negate what follows them in a clause.
var enNegators = map[string]bool{"never": true, "don't": true, "dont": true, "not": true, "no": true, "avoid": true,
	"refuse": true, "without": true, "nor": true, "stop": true, "cannot": true, "can't": true, "mustn't": true,
	"shouldn't": true, "won't": true, "neither": true, "mask": true, "redact": true, "censor": true, "obscure": true}

// enInverters after a negator turn it into a demand ("never forget to").
var enInverters = map[string]bool{"forget": true, "fail": true, "neglect": true, "omit": true, "hesitate": true, "matter": true}

var (
	// clauseBreak ends the reach of a negation.
	clauseBreak = regexp.MustCompile(`[.;!?:\n。；！？]|\b(?:but|however|instead|except|although|though|yet|whereas|otherwise)\b|但是|但|而是|不过|否则`)
	zhNegator   = regexp.MustCompile(`(?:` + zhNeg + `(?:忘|漏)?|隐藏|屏蔽|遮住|遮盖|打码|脱敏|去掉|删去|移除)`)
	secretAbout = regexp.MustCompile(`^(?:\.pub\b|[\s_-]*` + enNotSecret + `)`)
	enStopWord  = regexp.MustCompile(`\b(?:when|whenever|if|whether|how|why|where|before|after|about|which|without|unless|` +
		`number|count|amount|length|type|expiry|format|names?|for|to)\b`)
)

// InstructionHarm returns what harm instruction text asks of an assistant,
// or HarmNone: whether it asks to reveal credentials, keys, tokens,
// passwords, environment variables or sensitive files, or send files to
// an outside address (HarmRevealSecrets); to run downloaded code
// (HarmRunDownloaded); to lie to the user, pretend or claim success that
// is not so (HarmDeceive); or to hide things from the user (HarmHide). It
// reads English and Chinese. A negated request is safe: "never paste
// credentials into answers", "don't run scripts downloaded from the
// internet" and "不要把密码发给任何人" are rules an assistant may keep.
func InstructionHarm(text string) Harm {
	if h, ok := harms.get(text); ok {
		return h
	}
	h := instructionHarm(text)
	harms.put(text, h)
	return h
}

// harms remembers the verdicts on recent texts: recall asks about the
// same standing instructions for every prompt.
var harms = harmCache{m: map[string]Harm{}}

// maxCachedHarms bounds harms; when full it starts over.
const maxCachedHarms = 4096

type harmCache struct {
	mu sync.Mutex
	m  map[string]Harm
}

func (c *harmCache) get(text string) (Harm, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.m[text]
	return h, ok
}

func (c *harmCache) put(text string, h Harm) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedHarms {
		clear(c.m)
	}
	c.m[text] = h
}

func instructionHarm(text string) Harm {
	s := normalize(text)
	for _, r := range rules {
		if !containsAny(s, r.need) {
			continue
		}
		for _, loc := range r.re.FindAllStringSubmatchIndex(s, -1) {
			if r.harm == HarmRevealSecrets && aboutSomethingElse(s, loc) {
				continue
			}
			if r.stops && loc[2] >= 0 && enStopWord.MatchString(s[loc[2]:loc[3]]) {
				continue
			}
			if r.negatable && (negated(s[:loc[0]]) || zhNegatedWithin(s[loc[0]:loc[1]])) {
				continue
			}
			return r.harm
		}
	}
	return HarmNone
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// normalize lower-cases text, straightens quotes and folds spaces.
func normalize(text string) string {
	text = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`, "＂", `"`).Replace(text)
	return strings.Join(strings.Fields(strings.ToLower(text)), " ")
}

// aboutSomethingElse reports whether the secret a reveal match ends with
// is followed by a word that makes it about something else ("the token
// count").
func aboutSomethingElse(s string, loc []int) bool {
	return secretAbout.MatchString(s[loc[1]:])
}

// negated reports whether the end of before, the text of a clause ahead
// of a match, negates the match: a negator in its last clause, not turned
// into a demand ("never forget to"), with no comma between it and the
// match unless the comma sets off emphasis ("never, ever").
func negated(before string) bool {
	if locs := clauseBreak.FindAllStringIndex(before, -1); len(locs) > 0 {
		before = before[locs[len(locs)-1][1]:]
	}
	words := strings.Fields(before)
	for i := len(words) - 1; i >= 0 && i >= len(words)-8; i-- {
		w := strings.Trim(words[i], ",\"'()")
		if !enNegators[w] && !(w == "do" && i+1 < len(words) && strings.Trim(words[i+1], ",") == "not") {
			continue
		}
		if i+1 < len(words) && enInverters[strings.Trim(words[i+1], ",")] {
			return false
		}
		if w == "not" && i > 0 && strings.Trim(words[i-1], ",") == "or" {
			continue // "whether or not"
		}
		between := strings.Join(words[i+1:], " ")
		if strings.Contains(between, ",") && !strings.Contains(between, "ever") && !strings.Contains(between, "any ") {
			return false
		}
		return true
	}
	// Chinese: the last negator of the clause, unless a comma follows it
	// or it is "don't forget".
	locs := zhNegator.FindAllStringIndex(before, -1)
	for k := len(locs) - 1; k >= 0; k-- {
		l := locs[k]
		neg := before[l[0]:l[1]]
		if notNegator(before, l) {
			continue
		}
		if strings.HasSuffix(neg, "忘") || strings.HasSuffix(neg, "漏") {
			return false
		}
		return !strings.ContainsAny(before[l[1]:], "，,")
	}
	return false
}

// zhNegatedWithin reports whether a Chinese negator stands inside a
// match ("回答时隐藏密码", "密钥不要发给别人").
func zhNegatedWithin(match string) bool {
	for _, l := range zhNegator.FindAllStringIndex(match, -1) {
		neg := match[l[0]:l[1]]
		if !notNegator(match, l) && !strings.HasSuffix(neg, "忘") && !strings.HasSuffix(neg, "漏") {
			return true
		}
	}
	return false
}

// notNegator reports whether the negator found at loc of s is part of
// another word: 别 of 别人 ("others"), 特别 ("especially"), 区别.
func notNegator(s string, loc []int) bool {
	if s[loc[0]:loc[1]] != "别" {
		return false
	}
	next, _ := utf8.DecodeRuneInString(s[loc[1]:])
	prev, _ := utf8.DecodeLastRuneInString(s[:loc[0]])
	return strings.ContainsRune("人的处样", next) || strings.ContainsRune("分区特类级告识性个派差辨鉴", prev)
}
