package heuristic

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
)

const zhTimeWords = `(?:大前天|前天|昨天|昨晚|昨日|今天|今晚|今早|今日|明天|明晚|后天|上周末|这周末|下周末|周末|上周[一二三四五六日天]?|下周[一二三四五六日天]?|这周[一二三四五六日天]?|本周[一二三四五六日天]?|上星期[一二三四五六日天]?|下星期[一二三四五六日天]?|上个?月|下个?月|这个?月|去年|明年|今年|[一二两三四五六七八九十\d]+天前|[一二两三四五六七八九十\d]+天后|刚才|刚刚|最近|周[一二三四五六日]|星期[一二三四五六日天])`

var (
	zhFiller      = regexp.MustCompile(`^(?:(?:嗯+|哦+|噢+|啊+|哈+|好的|好吧|对了|是的|其实|另外|还有|那个)[，,、!！。\s]*)+`)
	zhQuestionEnd = regexp.MustCompile(`(?:吗|呢|么|吧)\s*$`)
	zhQuestion    = regexp.MustCompile(`(?:什么|怎么|为什么|哪里|哪儿|哪个|多少|是不是|能不能|可不可以|有没有|要不要|好不好|对不对)`)

	zhFromNow    = regexp.MustCompile(`^(?:请)?(?:以后|今后|往后|从现在开始|从现在起|从今以后|从今天起|从今天开始)[，,、\s]*(.+)$`)
	zhRemember   = regexp.MustCompile(`^(?:请你?|麻烦你?)?(?:记住|记得|牢记)[：:，,\s]*(.+)$`)
	zhAlways     = regexp.MustCompile(`^(?:请你?|你要?|你应该|麻烦你?)?(?:始终|总是|永远|一直|每次都|务必|一定要)(.+)$`)
	zhDontAgain  = regexp.MustCompile(`^(?:请你?|你)?(?:不要再|别再|永远不要|千万不要|再也不要|以后不要|以后别)(.+)$`)
	zhPrefer     = regexp.MustCompile(`我(?:很|非常|特别|真的|最|比较|超级|挺|也|一直|更|还是|就)*(?:喜欢|爱吃|爱喝|爱看|爱玩|热爱|讨厌|不喜欢|不爱|偏好|偏爱|更喜欢|受不了|害怕|怕|迷上了|沉迷于)(.+)`)
	zhName       = regexp.MustCompile(`我(?:叫|的名字是|名字叫|的名字叫)(.+)`)
	zhIdentity   = regexp.MustCompile(`我是(?:一名|一个|一位|个|名|位)?(.+)`)
	zhIdentSkip  = regexp.MustCompile(`^(?:说|不是|想|觉得|在|真的|不|这么|那么|怎么|来|为了|从|因为|被|跟|和|故意|开玩笑)`)
	zhWork       = regexp.MustCompile(`我(?:现在|目前)?(?:在|于)(.+?)(?:工作|上班|上学|读书|实习|任职)`)
	zhPlace      = regexp.MustCompile(`我(?:现在|目前)?(?:住在|生活在|搬到了?|搬去了?|来自|老家在|老家是|出生在|出生于|家在)(.+)`)
	zhHealth     = regexp.MustCompile(`我(?:对.+?过敏|不能吃|不吃|吃素|不能喝|不喝酒|是素食|有.{0,6}(?:病|过敏))`)
	zhFamily     = regexp.MustCompile(`我(?:的)?(?:老婆|老公|妻子|丈夫|太太|先生|孩子|儿子|女儿|爸爸|妈妈|父亲|母亲|父母|哥哥|姐姐|弟弟|妹妹|男朋友|女朋友|男友|女友|家人|爷爷|奶奶|外公|外婆|狗|猫)(?:叫|是|在|有|今年|已经|刚|喜欢|明天|下周)`)
	zhHaveFamily = regexp.MustCompile(`我有(?:一|两|三|四|五|\d)(?:个|只|条)(?:孩子|儿子|女儿|哥哥|姐姐|弟弟|妹妹|狗|猫|宠物)`)
	zhGoal       = regexp.MustCompile(`我的(?:梦想|目标|愿望|理想|计划)是`)
	zhEvent      = regexp.MustCompile(`我(?:们)?(?:刚刚?|已经|终于|今天|昨天)?(?:完成了|开始了|买了|换了|参加了|去了|拿到了|加入了|搬家了|辞职了|毕业了|结婚了|离职了|订婚了|生了|入职了|报名了|考上了|通过了|丢了|失业了|换工作了|被录取了|学会了)`)
	zhTime       = regexp.MustCompile(zhTimeWords)
	zhPlan       = regexp.MustCompile(`我(?:们)?(?:要|打算|准备|将|会|计划|约了|得|有)`)
)

func chineseSentence(raw string, sp speaker) (imprint.Candidate, bool) {
	ts := sp.ts
	text := strings.TrimSpace(zhFiller.ReplaceAllString(strings.TrimSpace(raw), ""))
	if utf8.RuneCountInString(text) < 3 || zhQuestionEnd.MatchString(text) || zhQuestion.MatchString(text) {
		return imprint.Candidate{}, false
	}
	name := chineseName(sp)
	chineseThirdPerson := func(s string) string { return chineseThirdPersonOf(s, name) }
	instr := func() (imprint.Candidate, bool) {
		if sp.people {
			return imprint.Candidate{}, false // no assistant to instruct
		}
		rule := strings.TrimPrefix(strings.TrimPrefix(text, "请"), "你")
		return imprint.Candidate{
			Content:   finishContent(name + "要求：" + chineseThirdPerson(rule)),
			Type:      imprint.MemoryInstruction,
			Priority:  80,
			SceneName: SceneInstructionZH,
		}, true
	}
	personaOf := func(text string, prio int) (imprint.Candidate, bool) {
		return imprint.Candidate{
			Content:   finishContent(chineseThirdPerson(text)),
			Type:      imprint.MemoryPersona,
			Priority:  prio,
			SceneName: ScenePersonaZH,
		}, true
	}
	persona := func(prio int) (imprint.Candidate, bool) { return personaOf(text, prio) }
	if m := zhFromNow.FindStringSubmatch(text); m != nil && !strings.HasPrefix(m[1], "我") {
		return instr()
	}
	if m := zhRemember.FindStringSubmatch(text); m != nil {
		if strings.HasPrefix(m[1], "我") {
			return personaOf(m[1], 75)
		}
		return instr()
	}
	if zhAlways.MatchString(text) || zhDontAgain.MatchString(text) {
		return instr()
	}
	if zhHealth.MatchString(text) || zhName.MatchString(text) {
		return persona(80)
	}
	if m := zhPrefer.FindStringSubmatch(text); m != nil && !strings.HasPrefix(m[1], "你") {
		return persona(70)
	}
	if zhWork.MatchString(text) || zhPlace.MatchString(text) {
		return persona(70)
	}
	if m := zhIdentity.FindStringSubmatch(text); m != nil && !zhIdentSkip.MatchString(m[1]) && !zhTime.MatchString(text) {
		return persona(70)
	}
	if zhFamily.MatchString(text) || zhHaveFamily.MatchString(text) {
		return persona(65)
	}
	if zhGoal.MatchString(text) {
		return persona(65)
	}
	timeExpr := zhTime.FindString(text)
	event := zhEvent.MatchString(text)
	plan := timeExpr != "" && zhPlan.MatchString(text)
	if (event || plan || timeExpr != "" && strings.Contains(text, "我")) && strings.Contains(text, "我") {
		c := imprint.Candidate{
			Content:   finishContent(chineseThirdPerson(text)),
			Type:      imprint.MemoryEpisodic,
			Priority:  65,
			SceneName: SceneEpisodicZH,
		}
		if timeExpr != "" {
			c.Priority = 70
			if d, ok := relativeDayZH(timeExpr, ts); ok {
				c.Metadata.ActivityStartTime = d.Format(time.DateOnly)
			}
		}
		return c, true
	}
	return imprint.Candidate{}, false
}

// chineseName is the subject of a Chinese memory of sp: the speaker's
// name, else 用户 (the user) or 对方 (the other person).
func chineseName(sp speaker) string {
	switch {
	case sp.named:
		return sp.name
	case sp.name == defaultOther:
		return "对方"
	}
	return "用户"
}

// chineseThirdPersonOf rewrites 我 (I), 我的 (my) and 我们 (we) in s as
// name.
func chineseThirdPersonOf(s, name string) string {
	s = strings.ReplaceAll(s, "我们", name+"等人")
	s = strings.ReplaceAll(s, "我的", name+"的")
	return strings.ReplaceAll(s, "我", name)
}
