package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxExtractChars is the longest message (in characters) the quality gate
// sends for extraction; longer ones are pasted logs or documents, not
// statements about the user.
const MaxExtractChars = 20000

// Reasons the quality gate gives for rejecting a message.
const (
	ReasonTooShort        = "too_short"
	ReasonTooLong         = "too_long"
	ReasonPromptInjection = "prompt_injection"
)

// injectionPattern is a regular expression with the literal words one of
// which any match contains; the cheap substring test skips most patterns
// for ordinary text.
type injectionPattern struct {
	needles string // "|"-separated
	re      *regexp.Regexp
}

// injectionNeedles are the distinct needles of injectionPatterns, and
// injectionNeedleOf the indexes into it of each pattern's needles.
var injectionNeedles, injectionNeedleOf = func() ([]string, [][]int) {
	var needles []string
	at := map[string]int{}
	of := make([][]int, len(injectionPatterns))
	for i, p := range injectionPatterns {
		for n := range strings.SplitSeq(p.needles, "|") {
			k, ok := at[n]
			if !ok {
				k = len(needles)
				at[n] = k
				needles = append(needles, n)
			}
			of[i] = append(of[i], k)
		}
	}
	return needles, of
}()

// injectionPatterns match attempts to take over the extraction model. They
// run on text folded by foldText (lower case, ASCII forms of full-width
// characters, single spaces). Each Chinese pattern stands on its own, so
// either half of a combined request is caught.
var injectionPatterns = []injectionPattern{
	// Override of earlier instructions.
	{"ignore", regexp.MustCompile(`\bignore (all |any |every )?(of )?(the |your |my |these |those )?(previous|prior|above|earlier|preceding|former|foregoing) (instructions?|prompts?|rules|guidelines|directions|directives|commands|context)\b`)},
	{"ignore", regexp.MustCompile(`\bignore (all|any|every) (of )?(your |the )?(instructions|rules|guidelines|directives|restrictions|safeguards)\b`)},
	{"ignore", regexp.MustCompile(`\bignore your (instructions|rules|guidelines|programming|system prompt|restrictions)\b`)},
	{"disregard", regexp.MustCompile(`\bdisregard (all |any )?(of )?(the |your )?(above|previous|prior|preceding|earlier)( (instructions?|prompts?|rules|guidelines|directions|messages|context))?( and\b|[.!,;:]|$)`)},
	{"disregard", regexp.MustCompile(`\bdisregard (all |any )?(of )?your (instructions|rules|guidelines|programming|system prompt)\b`)},
	{"forget", regexp.MustCompile(`\bforget (all |about )?(of )?(your|the previous|the above|all previous|previous|prior) (instructions|rules|guidelines|programming|training|constraints|system prompt)\b`)},
	{"forget", regexp.MustCompile(`\bforget everything (you were told|above|before this|you know about your rules)\b`)},
	{"override|bypass|disable|circumvent", regexp.MustCompile(`\b(override|bypass|disable|circumvent) (all |any )?(of )?your (safety |content |ethical )?(rules|filters?|guidelines|restrictions|guardrails|safeguards|programming|instructions)\b`)},
	{"override|bypass|disable|circumvent", regexp.MustCompile(`\b(override|bypass|disable|circumvent) (the |all )?(safety|content|ethical) (filters?|guidelines|restrictions|guardrails|safeguards|policies)\b`)},
	// Probing for the hidden prompt.
	{"prompt|system|instructions", regexp.MustCompile(`\b(reveal|print|show|display|output|repeat|leak|dump|tell me|give me|share|expose) (me )?(all |the full |the exact )?your (full |exact |entire |original |initial |hidden |secret )?(system prompt|system message|system instructions|initial instructions|hidden instructions|original instructions|instructions verbatim)\b`)},
	{"system|hidden", regexp.MustCompile(`\b(reveal|print|leak|dump|repeat|output) (me )?the (full |exact |entire |original |initial |hidden |secret )?(system prompt|system message|hidden prompt|hidden instructions)\b`)},
	{"what ", regexp.MustCompile(`\bwhat (is|are|was|were) your (system prompt|system instructions|hidden instructions|original instructions|initial instructions)\b`)},
	// Role hijack.
	{"you are now", regexp.MustCompile(`\byou are now (a |an |in )?(dan|unrestricted|unfiltered|uncensored|jailbroken|evil|free of|free from|no longer|without (any )?(rules|restrictions|limits|filters)|(developer|dev|god|sudo|admin|dan|jailbreak|debug|unrestricted) mode)\b`)},
	{"from now on", regexp.MustCompile(`\bfrom now on,? you (are|will be|will act as) (a |an )?(dan|unrestricted|unfiltered|uncensored|jailbroken|evil)\b`)},
	{"act |pretend|behave|roleplay|role-play", regexp.MustCompile(`\b(act|pretend|behave|roleplay|role-play) (as|like|to be) (a |an |if you were )?(dan|jailbroken|unrestricted|unfiltered|uncensored|evil|an? ai without (any )?(rules|restrictions|limits|filters))\b`)},
	{"do anything now", regexp.MustCompile(`\bdo anything now\b`)},
	{" mode", regexp.MustCompile(`\b(enter|switch (in)?to|activate|go into) (the )?(dan|jailbreak|jailbroken|god|sudo|developer|dev|unrestricted|unfiltered) mode\b`)},
	{" mode", regexp.MustCompile(`\b(developer|dan|jailbreak|god) mode (is )?(now )?(enabled|activated)\b`)},
	{"jailbr", regexp.MustCompile(`\bjailbr(eak|oke|oken)( mode| prompt|\b.{0,20}\b(yourself|you|the (ai|model|assistant|chatbot)))\b`)},
	{"jailbroken", regexp.MustCompile(`\byou('re| are) (now )?jailbroken\b`)},
	// Chat-template tokens pasted into a message.
	{"<|", regexp.MustCompile(`<\|(im_start|im_end|system|endoftext)\|>`)},
	// Chinese: override of earlier instructions.
	{"忽略|无视|不要理会|别理会|不要管|抛开", regexp.MustCompile(`(忽略|无视|不要理会|别理会|不要管|抛开)(掉)?(你)?(之前|以上|上面|前面|先前|此前|上述|刚才|所有|全部|一切)(的)?(所有|全部|一切)?(的)?(指令|指示|规则|命令|提示|设定|要求|限制|约束)`)},
	{"忽略|无视", regexp.MustCompile(`(忽略|无视)(掉)?(以上|上面|上述|前面)(所有|全部)?(的)?(内容|信息|文字)?\s*([，。,.!！;；：:]|$)`)},
	{"忘记|忘掉|忘了", regexp.MustCompile(`(忘记|忘掉|忘了)(你)?(之前|以上|所有|全部|你的)(的)?(所有|全部)?(的)?(指令|规则|设定|限制|约束|提示)`)},
	// Chinese: probing for the hidden prompt.
	{"系统|初始|隐藏|原始|内部|底层", regexp.MustCompile(`(输出|显示|展示|打印|告诉我|给我看|泄露|透露|说出|重复|发给我|念出)(一下)?(你|您)?(的)?(完整的?)?(系统|初始|隐藏|原始|内部|底层)(提示词|提示语|提示|指令|prompt|设定|消息)`)},
	{"你的|您的", regexp.MustCompile(`(你|您)的(系统|初始|隐藏|原始)(提示词|提示|指令|prompt)(是什么|是啥|内容)`)},
	// Chinese: role hijack.
	{"你现在是|从现在|你已经是", regexp.MustCompile(`(你现在是|从现在(开始|起)[，,]?你(就)?是|你已经是)(一个|一名|一位|个)?(不受|没有|无|毫无|解除)(任何)?(限制|约束|审查|道德|规则)`)},
	{"你现在是|从现在", regexp.MustCompile(`(你现在是|从现在(开始|起)[，,]?你(就)?是)\s*(dan|DAN|越狱|开发者模式|上帝模式)`)},
	{"扮演|假装|充当|模拟", regexp.MustCompile(`(扮演|假装|充当|模拟).{0,20}(不受|没有|无|毫无|解除|不存在)(任何)?(限制|约束|审查|道德|规则)`)},
	{"模式", regexp.MustCompile(`(进入|开启|切换到|切换为|启用|激活)(到)?(开发者|开发|越狱|上帝|调试|无限制|dan|DAN)模式`)},
}

// ShouldExtract reports whether a message is worth sending to the extraction
// model. It is not when, after trimming, it has fewer than two letters or
// digits (ReasonTooShort), is longer than MaxExtractChars characters
// (ReasonTooLong), or looks like a prompt injection in English or Chinese
// (ReasonPromptInjection). ok is true and reason empty otherwise.
func ShouldExtract(content string) (ok bool, reason string) {
	s := strings.TrimSpace(content)
	if utf8.RuneCountInString(s) > MaxExtractChars {
		return false, ReasonTooLong
	}
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
			if n >= 2 {
				break
			}
		}
	}
	if n < 2 {
		return false, ReasonTooShort
	}
	if LooksLikeInjection(s) {
		return false, ReasonPromptInjection
	}
	return true, ""
}

// LooksLikeInjection reports whether s matches one of the prompt-injection
// patterns (case, full-width forms and spacing are ignored).
func LooksLikeInjection(s string) bool {
	n := newNeedleSet(foldText(s))
	for i, p := range injectionPatterns {
		if p.match(i, n) {
			return true
		}
	}
	return false
}

// match reports whether p, injectionPatterns[i], matches n's text; it runs
// only when one of its needles is there.
func (p injectionPattern) match(i int, n *needleSet) bool {
	for _, k := range injectionNeedleOf[i] {
		if n.has(k) {
			return p.re.MatchString(n.text)
		}
	}
	return false
}

// needleSet says which of injectionNeedles a folded text holds, looking
// for each once, and not at all for one that is not ASCII in an ASCII
// text.
type needleSet struct {
	text  string
	ascii bool
	found [64]int8 // by needle: 0 not looked for yet, 1 in text, -1 not
}

func newNeedleSet(folded string) *needleSet {
	return &needleSet{text: folded, ascii: isASCII(folded)}
}

// has reports whether injectionNeedles[k] is in the text.
func (n *needleSet) has(k int) bool {
	needle := injectionNeedles[k]
	if k >= len(n.found) {
		return strings.Contains(n.text, needle)
	}
	if n.found[k] == 0 {
		n.found[k] = -1
		if !(n.ascii && !isASCII(needle)) && strings.Contains(n.text, needle) {
			n.found[k] = 1
		}
	}
	return n.found[k] == 1
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
