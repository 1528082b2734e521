package extract

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

// Heuristic scene names. The heuristic does not segment conversations; it
// files each memory under a fixed scene per type and language.
const (
	HeuristicScenePersona     = "About the user"
	HeuristicSceneInstruction = "Standing instructions"
	HeuristicSceneEpisodic    = "Events and plans"

	HeuristicScenePersonaZH     = "用户画像"
	HeuristicSceneInstructionZH = "用户指令"
	HeuristicSceneEpisodicZH    = "事件与计划"
)

// heuristicMaxPerMessage bounds the memories taken from one message, so one
// long monologue does not flood the store.
const heuristicMaxPerMessage = 3

// heuristicMaxContent bounds a memory's content in runes.
const heuristicMaxContent = 300

// Heuristic extracts memories from the user messages of newMsgs, a window
// of a conversation between a user and an AI assistant, without an LLM:
// explicit preferences and facts about the user (persona), standing
// instructions for the assistant (instruction) and dated or just-happened
// events and plans (episodic), in English and Chinese. It reads each
// sentence on its own; greetings, thanks, compliments, questions, idioms,
// advice, one-off requests and assistant messages yield nothing. An
// instruction needs a directive about the assistant's future behaviour
// ("from now on answer in English", "always show me the commands first").
// Content is a short third-person statement in the sentence's language
// naming the speaker: the message's Speaker, else "User" ("User prefers
// dark mode.", "用户喜欢猫。"). An episodic memory whose sentence names a
// relative day ("yesterday", "next Friday", "上周") gets
// metadata.activity_start_time, the UTC date (YYYY-MM-DD) that day falls on
// counted from the message's timestamp. The result is deterministic: the
// same messages give the same candidates, in message and sentence order,
// at most three per message. An instruction that asks for harm (see
// promptguard.InstructionHarm) is a candidate all the same: the Runner
// drops it, with a warning, as it does the model's.
func Heuristic(newMsgs []imprint.Message) []Candidate {
	return heuristic(newMsgs, false)
}

// HeuristicBetweenPeople is Heuristic for a window of a conversation
// between two people (imprint.Session.BetweenPeople): it reads the
// messages of both sides and attributes each memory to the person who
// said it, by the message's Speaker (else "User" for the user role and
// "The other person" for the other). Nothing is an instruction: there is
// no assistant to instruct. Episodic memories carry their date in the
// text, the relative time written out ("… on 7 May 2023", "… in the week
// before 9 June 2023"), else the day it was said ("… (said on 8 May
// 2023)"), so that each memory stands on its own.
func HeuristicBetweenPeople(newMsgs []imprint.Message) []Candidate {
	return heuristic(newMsgs, true)
}

func heuristic(newMsgs []imprint.Message, people bool) []Candidate {
	var out []Candidate
	seen := map[string]bool{}
	var names map[imprint.Role]string
	if people {
		names = speakerNames(newMsgs)
	}
	for _, m := range newMsgs {
		if !people && m.Role != imprint.RoleUser {
			continue
		}
		sp := speakerOf(m, people)
		if people {
			sp.listener = names[otherRole(m.Role)]
		}
		n := 0
		for _, s := range splitSentences(m.Content) {
			if n == heuristicMaxPerMessage {
				break
			}
			c, ok := heuristicSentence(s, sp)
			if !ok {
				continue
			}
			key := strings.ToLower(c.Content)
			if seen[key] {
				continue
			}
			seen[key] = true
			c.SourceMessageIDs = []string{m.ID}
			out = append(out, c)
			n++
		}
	}
	return out
}

// speaker is who said a message, as the heuristic writes about them.
type speaker struct {
	// name is the subject of the speaker's memories ("User", "Caroline").
	name string
	// named is set when name is the speaker's own name.
	named bool
	// listener is the other person's name in a conversation between
	// people, when known; a leading or trailing address to them is dropped.
	listener string
	// people is set in a conversation between people: no instructions,
	// dates written into episodic memories.
	people bool
	// ts is when the message was said.
	ts time.Time
}

// defaultSubject is the subject of a user message whose speaker is not
// known; defaultOther that of the other side's in a conversation between
// people.
const (
	defaultSubject = "User"
	defaultOther   = "The other person"
)

// speakerOf returns the speaker of m.
func speakerOf(m imprint.Message, people bool) speaker {
	sp := speaker{name: defaultSubject, people: people, ts: m.Timestamp.Time}
	if people && m.Role != imprint.RoleUser {
		sp.name = defaultOther
	}
	if name := oneLine(m.Speaker); name != "" {
		sp.name, sp.named = name, true
	}
	return sp
}

// speakerNames returns the first speaker name given for each role in msgs.
func speakerNames(msgs []imprint.Message) map[imprint.Role]string {
	names := map[imprint.Role]string{}
	for _, m := range msgs {
		if name := oneLine(m.Speaker); name != "" && names[m.Role] == "" {
			names[m.Role] = name
		}
	}
	return names
}

func otherRole(r imprint.Role) imprint.Role {
	if r == imprint.RoleUser {
		return imprint.RoleAssistant
	}
	return imprint.RoleUser
}

// possessive returns name's possessive form ("Caroline's").
func possessive(name string) string { return name + "'s" }

// sentence is one sentence of a message.
type sentence struct {
	text     string
	question bool
}

// splitSentences splits text at sentence ends (. ! ? ; … and their CJK
// forms, and line breaks). A period between digits or after a one-letter
// word or a common title does not end a sentence.
func splitSentences(text string) []sentence {
	text = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", `"`, "\u201d", `"`).Replace(text)
	var out []sentence
	var b strings.Builder
	flush := func(question bool) {
		s := strings.TrimSpace(b.String())
		b.Reset()
		if s == "" {
			if question && len(out) > 0 {
				out[len(out)-1].question = true
			}
			return
		}
		out = append(out, sentence{text: s, question: question})
	}
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '?', '？':
			flush(true)
		case '!', '！', ';', '；', '。', '…', '\n':
			flush(false)
		case '.':
			if i+1 < len(rs) && (unicode.IsDigit(rs[i+1]) || unicode.IsLetter(rs[i+1])) {
				b.WriteRune(r) // 3.5, e.g, example.com
				continue
			}
			if isAbbreviation(b.String()) {
				b.WriteRune(r)
				continue
			}
			flush(false)
		default:
			b.WriteRune(r)
		}
	}
	flush(false)
	return out
}

func isAbbreviation(before string) bool {
	i := strings.LastIndexFunc(before, func(r rune) bool { return !unicode.IsLetter(r) })
	w := strings.ToLower(before[i+1:])
	switch w {
	case "mr", "mrs", "ms", "dr", "st", "vs", "etc", "jr", "sr", "prof", "approx":
		return true
	}
	return utf8.RuneCountInString(w) == 1 && w != "i" && w != "a"
}

// heuristicSentence extracts at most one memory from one sentence said by
// sp. A shared photo's caption ("[shared photo: …]") is not something the
// speaker said.
func heuristicSentence(s sentence, sp speaker) (Candidate, bool) {
	if s.question || strings.HasPrefix(s.text, "[shared photo:") {
		return Candidate{}, false
	}
	if hasCJK(s.text) {
		return chineseSentence(s.text, sp)
	}
	return englishSentence(s.text, sp)
}

func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------- English

// enAdv are adverbs that may sit between a first-person subject and its verb.
const enAdv = `(?:(?:really|truly|absolutely|totally|definitely|just|also|still|actually|honestly|genuinely|kinda|finally|recently|already|now|currently|even|officially|seriously|so|very|much|always|usually|often|never|kind of|sort of)\s+)*`

var (
	// Fillers that open a sentence without adding content.
	enFiller = regexp.MustCompile(`(?i)^(?:(?:yeah|yea|yes|yep|yup|so|well|oh|ooh|wow|ok|okay|haha+|hah|lol|also|and|but|btw|by the way|actually|honestly|anyway|anyways|hey|hi|hello|um|uh|plus|sure|ah|aw+|omg|guess what|fun fact|oh and|and also)\b[\s,:!.\-–—]*)+`)

	// Chat spelling with a dropped g: "livin'", "startin'".
	enDroppedG = regexp.MustCompile(`\b(\w{2,})in'`)

	enQuestionStart = regexp.MustCompile(`(?i)^(?:what|how|why|who|whom|whose|where|when|which|do you|did you|does|are you|were you|can you|could you|would you|will you|have you|has|is it|is that|is there|any chance|wanna|want to)\b`)

	// Persona.
	enPrefer = regexp.MustCompile(`(?i)\bI\s+` + enAdv + `(prefer|like|love|enjoy|adore|hate|dislike|detest|can't stand|cannot stand|don't like|do not like|don't enjoy|do not enjoy|can't live without)\s+(\S+)`)
	// Objects of like/love that make a remark about the listener or the
	// moment, not a preference.
	enPreferSkip = map[string]bool{"you": true, "your": true, "yours": true, "it": true, "it's": true, "this": true, "that": true,
		"these": true, "those": true, "how": true, "when": true, "what": true, "seeing": true, "hearing": true, "talking": true,
		"chatting": true, "him": true, "her": true, "them": true, "us": true, "ya": true, "u": true, "having": true, "reading": true}
	enPassion   = regexp.MustCompile(`(?i)\b(?:I'm|I am)\s+` + enAdv + `(?:passionate about|into|a (?:big |huge )?fan of|obsessed with|addicted to|crazy about|keen on)\s+\S`)
	enIsPassion = regexp.MustCompile(`(?i)^[\w' ]{2,40}\s+(?:is|are)\s+(?:my|a) (?:passion|big passion|true passion|favorite thing|favourite thing)\b`)
	enFavorite  = regexp.MustCompile(`(?i)\bmy\s+(?:all-time\s+)?(?:favorite|favourite)\s+[\w ]{1,30}?\s+(?:is|are|was)\s+\S`)
	enName      = regexp.MustCompile(`(?i)\b(?:my name is|my name's|(?:you can|please|just) call me)\s+\S`)
	enBirthday  = regexp.MustCompile(`(?i)\bmy birthday is\s+\S`)
	enIdentity  = regexp.MustCompile(`(?i)\b(?:I'm|I am)\s+` + enAdv + `(?:a|an)\s+(\w+)`)
	enIdentSkip = map[string]bool{"bit": true, "little": true, "lot": true, "big": true, "huge": true, "fan": true, "mess": true, "wreck": true, "sucker": true, "tad": true, "fast": true, "quick": true, "slow": true, "few": true, "great": true, "good": true, "total": true, "nervous": true, "couple": true}
	enWork      = regexp.MustCompile(`(?i)\b(?:I|I'm|I am)\s+` + enAdv + `(?:work|working)\s+(?:as|at|for)\s+\S`)
	enStudy     = regexp.MustCompile(`(?i)\b(?:I|I'm|I am)\s+` + enAdv + `(?:study|studying|teach|teaching|major in|majoring in)\s+\S`)
	enPlace     = regexp.MustCompile(`(?i)\b(?:I|I'm|I am|I've|I have)\s+` + enAdv + `(?:live in|living in|lived in|moved to|grew up in|from|come from|was born in|relocated to|based in)\s+\S`)
	// enLifelong is a lifelong trait: "I've always had a love for horses".
	enLifelong = regexp.MustCompile(`(?i)\bI(?:'ve| have)\s+always\s+(loved|liked|enjoyed|had|felt|been|wanted|dreamed|dreamt)\s+(\S+)`)
	// enHabit is a habit: "I always deploy with blue-green releases".
	enHabit = regexp.MustCompile(`(?i)\bI\s+(?:always|usually|normally|never|often|rarely)\s+(\w+)\s+(\S+)`)
	// enHabitSkip are verbs after "I always" that report a feeling or a
	// courtesy, not a habit.
	enHabitSkip = wordSet(`think thought feel felt wonder wondered know knew say said try tried mean meant hope hoped wish
		love like look find get got make want need appreciate forget remember am was have had do did will would can could`)
	// enDearToMe is "X is (so) important to me".
	enDearToMe   = regexp.MustCompile(`(?i)^([\w' ]{2,40}?)(?:'s|\s+is|\s+are)\s+(?:(?:super|pretty|quite|incredibly)\s+)?` + enAdv + `(?:important|special|precious|dear|everything)\s+to me\b`)
	enHomePlace  = regexp.MustCompile(`(?i)\bmy\s+(?:home country|hometown|home town|home state|homeland)\b`)
	enHealth     = regexp.MustCompile(`(?i)\b(?:I'm|I am)\s+` + enAdv + `(?:allergic to|lactose intolerant|gluten intolerant|diabetic|celiac|vegetarian|vegan|pregnant|a vegetarian|a vegan)\b|\bI\s+` + enAdv + `(?:have|got)\s+(?:an?\s+)?(?:\w+\s+)?allergy\b|\bI\s+(?:can't|cannot|don't)\s+eat\s+\S`)
	enFamilyNoun = `(?:wife|husband|partner|spouse|kids?|children|son|sons|daughter|daughters|mom|mum|mother|dad|father|parents|brother|brothers|sister|sisters|siblings|family|dog|dogs|cat|cats|pet|pets|boyfriend|girlfriend|fianc[eé]e?|grandma|grandmother|grandpa|grandfather|baby|twins)`
	enFamily     = regexp.MustCompile(`(?i)\bmy\s+(?:\w+\s+)?` + enFamilyNoun + `(?:'s name)?\s+(?:is|are|was|were|has|have|had|just|got|went|turned|loves?|likes?|hates?|works?|lives?|started|finished|graduated|moved|passed|called)\b`)
	enHaveFamily = regexp.MustCompile(`(?i)\bI\s+(?:have|got)\s+(?:a|an|one|two|three|four|five|six|\d+)\s+(?:\w+\s+)?` + enFamilyNoun + `\b`)
	enStatus     = regexp.MustCompile(`(?i)\b(?:I'm|I am)\s+` + enAdv + `(?:married|engaged|divorced|widowed|single|retired|a (?:mom|mum|dad|mother|father|parent|grandparent|single mom|single dad))\b`)
	enGoal       = regexp.MustCompile(`(?i)\bmy\s+(?:\w+\s+)?(?:dream|goal|aim|ambition|passion|mission|plan)\s+(?:is|was)\s+\S`)
	enHelpsMe    = regexp.MustCompile(`(?i)^([\w'&]+(?:\s+[\w'&]+){0,3})\s+` + enAdv + `(?:helps|help|helped|has helped|have helped|gives|give|gave|brings|bring|brought|motivates|motivate|inspires|inspire|relaxes|calms|energizes)\s+me\b`)
	enSubjSkip   = map[string]bool{"you": true, "your": true, "it": true, "this": true, "that": true, "these": true, "those": true, "he": true, "she": true, "they": true,
		"his": true, "her": true, "their": true, "which": true, "what": true, "who": true, "there": true, "everyone": true, "everything": true, "nothing": true,
		"we": true, "our": true, "i": true, "u": true, "thanks": true, "thank": true, "talking": true, "chatting": true}

	// Episodic and ongoing activities.
	enBeenDoing = regexp.MustCompile(`(?i)\b(?:I've|I have|we've|we have)\s+` + enAdv + `been\s+` + enAdv + `(\w+ing)\b(\s+\S+)?`)
	enDoing     = regexp.MustCompile(`(?i)\b(?:I'm|I am|we're|we are)\s+` + enAdv + `(\w+ing|gonna)\b(\s+\S+)?`)
	enFuture    = regexp.MustCompile(`(?i)\b(?:I'm|I am|we're|we are)\s+` + enAdv + `(?:going to|gonna|planning to|planning on|about to|hoping to|off to)\b|\b(?:I|we)(?:'ll|\s+will)\b|\b(?:I|we)\s+(?:have|have got|got)\s+(?:a|an|my|our)\s+\w+`)
	enPast      = regexp.MustCompile(`(?i)\b(?:I|we)\s+` + enAdv + `(\w+ed|went|got|took|made|had to|met|won|lost|bought|sold|built|began|became|wrote|drove|flew|ran|left|quit|found|gave|spent|taught|caught|brought|chose|ate|swam|sang|rode|broke|fell|grew|finally did|signed up|shut down|came back)\b(\s+\S+)?`)
	// enDated are events that say little without a time: "I had an
	// interview yesterday", "I've been to Paris".
	enDated       = regexp.MustCompile(`(?i)\b(?:I|we)(?:\s+` + enAdv + `had|(?:'ve|\s+have)\s+` + enAdv + `been\s+to)\s+(\S+)`)
	enBareStart   = regexp.MustCompile(`(?i)^(?:just\s+)?(went|started|finished|got|lost|joined|visited|attended|bought|moved|quit|signed up|applied|graduated|completed|launched|opened|adopted|booked|began|tried out|won|spent)\b(\s+\S+)?`)
	enProgressive = map[string]bool{} // filled in init
	enPastSkip    = map[string]bool{}
	enObjSkip     = map[string]bool{"it": true, "you": true, "your": true, "this": true, "that": true, "me": true, "ya": true, "u": true}
	enLifeEvent   = regexp.MustCompile(`(?i)\b(?:lost (?:my|our|their) job|got (?:married|engaged|divorced|promoted|fired|laid off|hired)|new job|graduated|moved (?:to|into|out)|adopt(?:ed|ion)|had (?:a|our|my|their) baby|passed away|retired|started (?:my|our|their) own|diagnos\w+|surgery|pregnant|broke up)\b`)
	enClauseJoin  = map[string]bool{"and": true, "but": true, "so": true, "because": true, "cause": true, "then": true, "now": true, "also": true, "lately": true,
		"recently": true, "currently": true, "since": true, "when": true, "after": true, "before": true, "while": true, "today": true, "yesterday": true,
		"tonight": true, "tomorrow": true, "weekend": true, "week": true, "month": true, "year": true, "ago": true, "day": true, "morning": true,
		"night": true, "evening": true, "afternoon": true, "finally": true, "actually": true, "honestly": true, "well": true, "plus": true, "once": true,
		"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true, "saturday": true, "sunday": true, "though": true,
		"anyway": true, "guess": true, "until": true, "as": true}
)

func init() {
	// Progressive verbs that report a mood, a remark or a courtesy rather
	// than an activity worth remembering.
	for _, w := range strings.Fields(`feeling doing thinking hoping wondering kidding joking saying talking telling asking rooting
		counting staying being loving enjoying missing waiting dying guessing assuming sending wishing praying glad sorry
		looking going gonna having getting coming hearing seeing reading watching listening wearing holding smiling
		laughing crying freaking thrilled blessed happy proud curious meaning checking`) {
		enProgressive[w] = true
	}
	// Past verbs that report an opinion, a perception or a courtesy.
	for _, w := range strings.Fields(`loved liked enjoyed wanted needed hoped wished noticed guessed figured imagined believed agreed
		appreciated used meant supposed realized interested excited tired stressed bored pleased surprised amazed impressed
		touched inspired thrilled blessed glad saw felt knew thought heard told said assumed expected wondered seemed
		looked sounded talked chatted asked answered replied mentioned forgot remembered missed called texted showed
		wanted reminded tried`) {
		enPastSkip[w] = true
	}
}

// firstWord returns the lowercased first word of s.
func firstWord(s string) string {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return !(unicode.IsLetter(r) || r == '\'') })
	if i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(s)
}

// clauseStart reports whether text[:at] lets a subject start a clause at
// at: nothing before it, punctuation, or a joining word ("and", "so", a
// time word). "the hard work I'm putting in" is not a clause of its own.
func clauseStart(text string, at int) bool {
	before := strings.TrimSpace(text[:at])
	if before == "" {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(before)
	if strings.ContainsRune(`,;:-–—("`, last) {
		return true
	}
	i := strings.LastIndexFunc(before, func(r rune) bool { return !(unicode.IsLetter(r) || r == '\'') })
	return enClauseJoin[strings.ToLower(before[i+1:])]
}

// findClause returns the start of the first match of re whose subject
// starts a clause and that ok accepts, or -1.
func findClause(re *regexp.Regexp, text string, ok func(m []int) bool) int {
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		if clauseStart(text, m[0]) && (ok == nil || ok(m)) {
			return m[0]
		}
	}
	return -1
}

// findClauseIf is findClause when gate is true, else -1.
func findClauseIf(gate bool, re *regexp.Regexp, text string, ok func(m []int) bool) int {
	if !gate {
		return -1
	}
	return findClause(re, text, ok)
}

func group(text string, m []int, g int) string {
	if len(m) <= 2*g+1 || m[2*g] < 0 {
		return ""
	}
	return text[m[2*g]:m[2*g+1]]
}

func englishSentence(raw string, sp speaker) (Candidate, bool) {
	text, ok := englishClean(raw)
	if !ok {
		return Candidate{}, false
	}
	if sp.listener != "" {
		if text, ok = dropAddress(text, sp.listener); !ok {
			return Candidate{}, false
		}
	}
	w := newEnWords(text)
	if !w.mayMatch() {
		return Candidate{}, false
	}
	return englishPatterns(text, sp, w)
}

// englishClean drops a sentence's opening fillers and trailing
// punctuation and spells dropped g's out; false for fewer than three words
// or a question.
func englishClean(raw string) (string, bool) {
	text := strings.TrimSpace(enFiller.ReplaceAllString(raw, ""))
	text = enDroppedG.ReplaceAllString(text, "${1}ing")
	text = strings.TrimRight(text, " .,:-–—")
	if len(strings.Fields(text)) < 3 || enQuestionStart.MatchString(text) {
		return "", false
	}
	return text, true
}

// dropAddress removes the listener's name where the sentence addresses
// them ("Mel, I went …", "… for me, Caroline"), with the fillers it frees;
// false when too little is left.
func dropAddress(text, listener string) (string, bool) {
	name := strings.Fields(listener)[0]
	cut := false
	if len(text) > len(name) && strings.EqualFold(text[:len(name)], name) && strings.ContainsRune(" ,:!.-–—", rune(text[len(name)])) {
		text, cut = strings.TrimLeft(text[len(name):], " ,:!.-–—"), true
	}
	if i := len(text) - len(name); i > 1 && strings.EqualFold(text[i:], name) && text[i-1] == ' ' && text[i-2] == ',' {
		text, cut = text[:i-2], true
	}
	if !cut {
		return text, true
	}
	return englishClean(text)
}

// englishPatterns runs the instruction, persona and episodic patterns on a
// cleaned sentence said by sp; w gates the patterns whose words text
// lacks. Between people an instruction-shaped sentence is advice to the
// other person and yields nothing.
func englishPatterns(text string, sp speaker, w enWords) (Candidate, bool) {
	if c, ok, directive := englishInstruction(text, sp); ok || directive {
		return c, ok
	}
	if c, ok := englishPersona(text, sp, w); ok {
		return c, true
	}
	return englishEpisodic(text, sp, w)
}

// enWords are the lowercased ASCII words of a sentence, split where the
// patterns' \b splits. A pattern that needs a word as a whole word (any
// case) cannot match a sentence without it, so the patterns are only run
// when has or hasAny says their words are there: most sentences lack most
// of them, and each skipped pattern is a regular expression pass saved.
type enWords struct {
	// all makes every word present: no pattern is skipped.
	all   bool
	first string
	set   map[string]bool
}

// enTriggers are the words one of which every unanchored English pattern
// needs: a first-person subject or object, the listener of an instruction,
// a standing cue of an instruction, or the noun of enIsPassion.
var enTriggers = []string{"i", "we", "my", "me", "you", "assistant", "passion", "favorite", "favourite",
	// enStanding's words, for an imperative with a standing cue.
	"always", "never", "now", "here", "forward", "future", "every", "each", "whenever", "default", "rule", "anytime", "time"}

// enStarters are the first words the patterns anchored at the sentence's
// start begin with (enFromNow, enAlways, enRemember, enDontEver,
// enDontAgain, enBareStart).
var enStarters = map[string]bool{"please": true, "from": true, "going": true, "moving": true, "henceforth": true, "in": true,
	"for": true, "always": true, "never": true, "remember": true, "keep": true, "note": true, "don": true, "do": true,
	"dont": true, "stop": true, "just": true, "went": true, "started": true, "finished": true, "got": true, "lost": true,
	"joined": true, "visited": true, "attended": true, "bought": true, "moved": true, "quit": true, "signed": true,
	"applied": true, "graduated": true, "completed": true, "launched": true, "opened": true, "adopted": true,
	"booked": true, "began": true, "tried": true, "won": true, "spent": true}

// newEnWords splits text into words. Text with a character that
// case-folds onto an ASCII letter (U+017F, U+212A) gets every word, so it
// takes the full path.
func newEnWords(text string) enWords {
	if strings.ContainsAny(text, "\u017f\u212a") {
		return enWords{all: true}
	}
	w := enWords{set: map[string]bool{}}
	for i := 0; i < len(text); {
		if !isASCIIWord(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isASCIIWord(text[j]) {
			j++
		}
		word := strings.ToLower(text[i:j])
		if i == 0 {
			w.first = word
		}
		w.set[word] = true
		i = j
	}
	return w
}

func isASCIIWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// has reports whether word (lowercase) is one of the sentence's words.
func (w enWords) has(word string) bool { return w.all || w.set[word] }

// hasAny reports whether any of words is one of the sentence's words.
func (w enWords) hasAny(words ...string) bool {
	if w.all {
		return true
	}
	for _, word := range words {
		if w.set[word] {
			return true
		}
	}
	return false
}

// mayMatch is a necessary condition for any English pattern to match.
func (w enWords) mayMatch() bool {
	return w.all || enStarters[w.first] || w.hasAny(enTriggers...)
}

func isFirstPersonSubject(s string) bool {
	switch firstWord(s) {
	case "i", "i'm", "i've", "i'd", "i'll", "my", "we", "we're", "we've", "we'll", "our":
		return true
	}
	return false
}

func englishPersona(text string, sp speaker, w enWords) (Candidate, bool) {
	persona := func(at, prio int) (Candidate, bool) {
		return Candidate{
			Content:   finishContent(thirdPerson(clauseFrom(text, at), sp.name, false)),
			Type:      imprint.MemoryPersona,
			Priority:  prio,
			SceneName: HeuristicScenePersona,
		}, true
	}
	// Each pattern runs only when the sentence has the words it is built
	// on (see enWords): "I" or "my" and one of its verbs or nouns.
	subjI, subjMy := w.has("i"), w.has("my")
	if subjI && w.hasAny("allergic", "lactose", "gluten", "diabetic", "celiac", "vegetarian", "vegan", "pregnant", "allergy", "eat") {
		if at := findClause(enHealth, text, nil); at >= 0 {
			return persona(at, 80)
		}
	}
	if w.hasAny("name", "call") {
		if at := findClause(enName, text, nil); at >= 0 {
			return persona(at, 80)
		}
	}
	if subjI && w.hasAny("prefer", "like", "love", "enjoy", "adore", "hate", "dislike", "detest", "stand", "live") {
		if at := findClause(enPrefer, text, func(m []int) bool {
			obj := strings.ToLower(strings.Trim(group(text, m, 2), `,."'!`))
			if enPreferSkip[obj] || obj == "to" && strings.TrimSpace(text[m[5]:]) == "" {
				return false // "I'd love to."
			}
			// "I love that you ..." and friends are compliments.
			return !strings.HasPrefix(obj, "you")
		}); at >= 0 {
			return persona(at, 70)
		}
	}
	for _, p := range []struct {
		re   *regexp.Regexp
		gate bool
	}{
		{enPassion, subjI && w.hasAny("passionate", "into", "fan", "obsessed", "addicted", "crazy", "keen")},
		{enFavorite, subjMy && w.hasAny("favorite", "favourite")},
		{enWork, subjI && w.hasAny("work", "working")},
		{enPlace, subjI && w.hasAny("live", "living", "lived", "moved", "grew", "from", "come", "born", "relocated", "based")},
		{enStatus, subjI && w.hasAny("married", "engaged", "divorced", "widowed", "single", "retired", "mom", "mum", "dad",
			"mother", "father", "parent", "grandparent")},
		{enFamily, subjMy},
		{enHaveFamily, subjI && w.hasAny("have", "got")},
		{enBirthday, subjMy && w.has("birthday")},
	} {
		if !p.gate {
			continue
		}
		if at := findClause(p.re, text, nil); at >= 0 {
			return persona(at, 70)
		}
	}
	if subjI && w.hasAny("a", "an") {
		if at := findClause(enIdentity, text, func(m []int) bool { return !enIdentSkip[strings.ToLower(group(text, m, 1))] }); at >= 0 {
			return persona(at, 70)
		}
	}
	if w.hasAny("passion", "favorite", "favourite") {
		if m := enIsPassion.FindStringIndex(text); m != nil {
			return persona(0, 70)
		}
	}
	if subjI && w.hasAny("study", "studying", "teach", "teaching", "major", "majoring") {
		if at := findClause(enStudy, text, nil); at >= 0 {
			return persona(at, 65)
		}
	}
	if subjMy && w.hasAny("dream", "goal", "aim", "ambition", "passion", "mission", "plan") {
		if at := findClause(enGoal, text, nil); at >= 0 {
			return persona(at, 65)
		}
	}
	if subjMy && w.hasAny("home", "hometown", "homeland") && enHomePlace.MatchString(text) {
		return persona(0, 65) // the whole sentence says what the place is
	}
	if subjI && w.has("always") {
		if at := findClause(enLifelong, text, func(m []int) bool {
			obj := strings.ToLower(strings.Trim(group(text, m, 2), `,."'!`))
			return !enPreferSkip[obj] && obj != "here" && obj != "there" && !strings.HasPrefix(obj, "you")
		}); at >= 0 {
			return persona(at, 65)
		}
	}
	if subjI && w.hasAny("always", "usually", "normally", "never", "often", "rarely") {
		if at := findClause(enHabit, text, func(m []int) bool {
			obj := strings.ToLower(strings.Trim(group(text, m, 2), `,."'!`))
			return !enHabitSkip[strings.ToLower(group(text, m, 1))] && !enObjSkip[obj] && !enPreferSkip[obj]
		}); at >= 0 {
			return persona(at, 65)
		}
	}
	if w.has("me") && w.hasAny("important", "special", "precious", "dear", "everything") {
		if m := enDearToMe.FindStringSubmatch(text); m != nil && !enSubjSkip[firstWord(m[1])] {
			return persona(0, 65)
		}
	}
	if w.has("me") {
		if m := enHelpsMe.FindStringSubmatch(text); m != nil {
			subj := strings.ToLower(m[1])
			ok := !enSubjSkip[firstWord(subj)]
			for _, w := range strings.Fields(subj) {
				if w == "you" || w == "your" || w == "ya" {
					ok = false
				}
			}
			if ok {
				return persona(0, 60)
			}
		}
	}
	if w.has("been") && w.hasAny("i", "we") {
		if at := findClause(enBeenDoing, text, func(m []int) bool { return activityVerb(group(text, m, 1), group(text, m, 2)) }); at >= 0 {
			return persona(at, 60)
		}
	}
	return Candidate{}, false
}

func englishEpisodic(text string, sp speaker, w enWords) (Candidate, bool) {
	ts := sp.ts
	var timeExpr string
	if w.hasAny("yesterday", "today", "tonight", "tomorrow", "this", "last", "next", "on", "other", "ago", "in",
		"recently", "lately", "now") {
		timeExpr = keyword.FindTimePhrase(text)
	}
	subj := w.hasAny("i", "we")
	episodic := func(clause string, future bool) (Candidate, bool) {
		prio := 65
		if timeExpr != "" {
			prio = 70
		}
		if lc := strings.ToLower(clause); containsWords(lc, strings.ToLower(sp.name)+" just") || containsWords(lc, "they just") {
			prio = 75
		}
		if enLifeEvent.MatchString(clause) {
			prio = 80
		}
		if sp.people {
			clause = datedEN(clause, timeExpr, ts, future)
		}
		c := Candidate{
			Content:   finishContent(clause),
			Type:      imprint.MemoryEpisodic,
			Priority:  prio,
			SceneName: HeuristicSceneEpisodic,
		}
		if timeExpr != "" {
			if d, ok := keyword.RelativeDay(strings.ToLower(timeExpr), ts, future); ok {
				c.Metadata.ActivityStartTime = d.Format(time.DateOnly)
			}
		}
		return c, true
	}
	objOK := func(m []int, g int) bool {
		obj := strings.ToLower(strings.Trim(group(text, m, g), " ,.!'\""))
		return !enObjSkip[obj]
	}
	// Plans with a stated time: "I'm going to Paris next week", "tomorrow I have a test".
	if timeExpr != "" && subj && !enLifeEvent.MatchString(text) {
		if at := findClause(enFuture, text, nil); at >= 0 {
			return episodic(thirdPerson(clauseFrom(text, at), sp.name, false), true)
		}
	}
	if at := findClauseIf(subj, enPast, text, func(m []int) bool {
		v := strings.ToLower(group(text, m, 1))
		if m[3] < len(text) && text[m[3]] == '\'' {
			return false // "won't", not "won"
		}
		return !enPastSkip[v] && objOK(m, 2)
	}); at >= 0 {
		return episodic(thirdPerson(clauseFrom(text, at), sp.name, false), false)
	}
	if at := findClauseIf(timeExpr != "" && subj && w.hasAny("had", "been"), enDated, text, func(m []int) bool { return objOK(m, 1) }); at >= 0 {
		return episodic(thirdPerson(clauseFrom(text, at), sp.name, false), false)
	}
	if w.all || enStarters[w.first] { // enBareStart is anchored at a starter
		if m := enBareStart.FindStringSubmatchIndex(text); m != nil && objOK(m, 2) && !(m[3] < len(text) && text[m[3]] == '\'') {
			return episodic(thirdPerson(sp.name+" "+lowerFirst(text), sp.name, false), false)
		}
	}
	if at := findClauseIf(subj && w.hasAny("m", "am", "re", "are"), enDoing, text, func(m []int) bool {
		v := strings.ToLower(group(text, m, 1))
		if v == "going" || v == "gonna" {
			// "I'm going to a conference" is a plan; "I'm gonna make it" is not.
			next := firstWord(group(text, m, 2))
			return v == "going" && next == "to" && destinationAfter(text[m[1]:])
		}
		return activityVerb(v, group(text, m, 2))
	}); at >= 0 {
		return episodic(thirdPerson(clauseFrom(text, at), sp.name, false), true)
	}
	return Candidate{}, false
}

// containsWords reports whether s holds phrase as whole words: with no
// letter, digit or underscore right before or after it. "ana just" is in
// "then ana just left", not in "diana just left" or "ana justified it".
func containsWords(s, phrase string) bool {
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], phrase)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(phrase)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		_, n := utf8.DecodeRuneInString(s[start:])
		i = start + n
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// activityVerb reports whether a progressive verb (and the word after it)
// names an activity: "looking into" does, "looking forward" does not.
func activityVerb(verb, next string) bool {
	verb = strings.ToLower(verb)
	if verb == "looking" {
		n := firstWord(next)
		return n == "into" || n == "for"
	}
	return !enProgressive[verb]
}

// destinationAfter reports whether the words after "going to" name a place
// or an event ("a conference", "the beach", "Paris") rather than a verb.
func destinationAfter(rest string) bool {
	w := strings.Fields(rest)
	if len(w) == 0 {
		return false
	}
	switch strings.ToLower(w[0]) {
	case "a", "an", "the", "my", "our", "his", "her", "their", "this", "that", "church", "school", "work", "college", "bed":
		return strings.ToLower(w[0]) != "bed"
	}
	r, _ := utf8.DecodeRuneInString(w[0])
	return unicode.IsUpper(r)
}

// clauseFrom returns text from at, or the whole text when what precedes at
// is only a time phrase ("Last weekend I joined ...").
func clauseFrom(text string, at int) string {
	if at <= 0 {
		return text
	}
	before := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text[:at]), ",:-–—"))
	if t := keyword.FindTimePhrase(before); t != "" && len(strings.Fields(before)) <= len(strings.Fields(t))+1 {
		return text
	}
	return text[at:]
}

// ------------------------------------------------- English third person

var enIrregularPast = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`went got took made had met won lost bought sold built began became wrote drove flew ran left
		quit found gave spent taught caught brought chose ate drank swam sang rode broke fell grew knew thought said told heard
		saw felt did was were read put set cut let hit hurt kept held paid sent sat stood understood woke wore led fed shut
		can could will would should must may might shall used ought`) {
		enIrregularPast[w] = true
	}
}

// enPresentEed are present-tense verbs that end in "ed" like a past tense.
var enPresentEed = map[string]bool{"need": true, "feed": true, "bleed": true, "breed": true, "speed": true,
	"proceed": true, "exceed": true, "succeed": true, "seed": true, "weed": true, "shred": true}

var enAdverbs = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`really truly absolutely totally definitely just also still actually honestly genuinely kinda
		finally recently already now currently even officially seriously so very always usually often never sometimes
		rarely mostly only probably certainly literally basically`) {
		enAdverbs[w] = true
	}
}

// thirdPerson rewrites a first-person English clause about its speaker in
// the third person: the first mention becomes name (verbs agree), later
// ones "they"/"their"/"them" (verbs agree with "they"). With asObject
// (instructions), every mention is name.
func thirdPerson(s, name string, asObject bool) string {
	toks := tokenize(s)
	mentioned := false
	// plural is set while the last subject written takes a plural verb
	// ("they", "Caroline and others").
	plural := false
	self := strings.ToLower(strings.Fields(name + " x")[0])
	var out strings.Builder
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		lw := strings.ToLower(t)
		if !isWord(t) {
			out.WriteString(t)
			continue
		}
		if lw == "user" || lw == self {
			mentioned = true
			out.WriteString(t)
			continue
		}
		switch lw {
		case "i", "i'm", "i've", "i'd", "i'll", "we", "we're", "we've", "we'd", "we'll":
			var subj string
			third := false
			switch {
			case asObject:
				subj, third = name, true
			case mentioned:
				subj = "they"
			case strings.HasPrefix(lw, "we"):
				subj, mentioned = name+" and others", true
			default:
				subj, third, mentioned = name, true, true
			}
			plural = !third
			switch {
			case strings.HasSuffix(lw, "'m"), strings.HasSuffix(lw, "'re"):
				out.WriteString(subj + pick(third, " is", " are"))
			case strings.HasSuffix(lw, "'ve"):
				out.WriteString(subj + " " + agree(third, "have"))
			case strings.HasSuffix(lw, "'d"):
				out.WriteString(subj + " would")
			case strings.HasSuffix(lw, "'ll"):
				out.WriteString(subj + " will")
			default:
				out.WriteString(subj)
				if third {
					i = conjugateNext(toks, i, &out, agreeThird)
				} else {
					i = conjugateNext(toks, i, &out, agreePlural)
				}
			}
		case "me":
			if asObject || !mentioned {
				mentioned = mentioned || !asObject
				out.WriteString(name)
			} else {
				out.WriteString("them")
			}
		case "my", "our":
			switch {
			case asObject || !mentioned:
				mentioned = mentioned || !asObject
				out.WriteString(possessive(name))
			default:
				out.WriteString("their")
			}
		case "mine", "ours":
			out.WriteString(pick(asObject || !mentioned, possessive(name), "theirs"))
		case "myself", "ourselves":
			out.WriteString(pick(asObject || !mentioned, name, "themselves"))
		case "us":
			out.WriteString(pick(asObject || !mentioned, name, "them"))
		case "am":
			// Only "I" takes "am": a later "and am" still refers to the
			// speaker.
			out.WriteString(pick(plural, "are", "is"))
		default:
			out.WriteString(t)
		}
	}
	return out.String()
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// conjugateNext writes the tokens after a subject at toks[i] up to and
// including its verb, made to agree with the subject by form, and returns
// the index of the last token written.
func conjugateNext(toks []string, i int, out *strings.Builder, form func(string) string) int {
	for j := i + 1; j < len(toks); j++ {
		t := toks[j]
		if !isWord(t) {
			if strings.TrimSpace(t) != "" { // punctuation ends the search
				return j - 1
			}
			out.WriteString(t)
			continue
		}
		if enAdverbs[strings.ToLower(t)] {
			out.WriteString(t)
			continue
		}
		out.WriteString(form(t))
		return j
	}
	return len(toks) - 1
}

// agreeThird is agree for a third-person singular subject.
func agreeThird(verb string) string { return agree(true, verb) }

// agreePlural returns verb in the form "they" takes after a first-person
// singular one ("was" → "were", "am" → "are").
func agreePlural(verb string) string {
	switch strings.ToLower(verb) {
	case "am":
		return "are"
	case "was":
		return "were"
	case "wasn't":
		return "weren't"
	}
	return verb
}

// agree returns verb in the form a third-person singular subject takes
// when third is set.
func agree(third bool, verb string) string {
	if !third {
		return verb
	}
	lw := strings.ToLower(verb)
	switch lw {
	case "am":
		return "is"
	case "have":
		return "has"
	case "do":
		return "does"
	case "go":
		return "goes"
	case "don't":
		return "doesn't"
	case "haven't":
		return "hasn't"
	case "am not":
		return "is not"
	}
	if enIrregularPast[lw] || (strings.HasSuffix(lw, "ed") && !enPresentEed[lw]) || strings.Contains(lw, "'") || lw == "to" || lw == "not" {
		return verb
	}
	switch {
	case strings.HasSuffix(lw, "s"), strings.HasSuffix(lw, "sh"), strings.HasSuffix(lw, "ch"), strings.HasSuffix(lw, "x"), strings.HasSuffix(lw, "z"), strings.HasSuffix(lw, "o"):
		return verb + "es"
	case strings.HasSuffix(lw, "y") && len(lw) > 1 && !strings.ContainsRune("aeiou", rune(lw[len(lw)-2])):
		return verb[:len(verb)-1] + "ies"
	}
	return verb + "s"
}

// tokenize splits s into words (letters, digits, apostrophes) and the runs
// of other characters between them, so joining the tokens gives s back.
func tokenize(s string) []string {
	var toks []string
	start := 0
	inWord := false
	for i, r := range s {
		w := unicode.IsLetter(r) || unicode.IsDigit(r) || (r == '\'' && inWord)
		if i > 0 && w != inWord {
			toks = append(toks, s[start:i])
			start = i
		}
		inWord = w
	}
	if start < len(s) {
		toks = append(toks, s[start:])
	}
	return toks
}

func isWord(t string) bool {
	r, _ := utf8.DecodeRuneInString(t)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == 'I' && (len(s) == n || !unicode.IsLetter(rune(s[n]))) {
		return s // the pronoun
	}
	if len(s) > n && unicode.IsUpper(rune(s[n])) {
		return s // an acronym
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// finishContent capitalizes, bounds and terminates a memory's content.
func finishContent(s string) string {
	s = oneLine(s)
	s = strings.TrimRight(s, " ,;:-–—")
	if utf8.RuneCountInString(s) > heuristicMaxContent {
		rs := []rune(s)[:heuristicMaxContent]
		cut := string(rs)
		if i := strings.LastIndexByte(cut, ' '); i > heuristicMaxContent/2 {
			cut = cut[:i]
		}
		s = strings.TrimRight(cut, " ,;:") + "…"
	}
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if hasCJK(s) {
		if !strings.HasSuffix(s, "。") && !strings.HasSuffix(s, "…") {
			s += "。"
		}
		return s
	}
	last, _ := utf8.DecodeLastRuneInString(s)
	if !strings.ContainsRune(".!…", last) {
		s += "."
	}
	return s
}

// ---------------------------------------------------------------- Chinese

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

func chineseSentence(raw string, sp speaker) (Candidate, bool) {
	ts := sp.ts
	text := strings.TrimSpace(zhFiller.ReplaceAllString(strings.TrimSpace(raw), ""))
	if utf8.RuneCountInString(text) < 3 || zhQuestionEnd.MatchString(text) || zhQuestion.MatchString(text) {
		return Candidate{}, false
	}
	name := chineseName(sp)
	chineseThirdPerson := func(s string) string { return chineseThirdPersonOf(s, name) }
	instr := func() (Candidate, bool) {
		if sp.people {
			return Candidate{}, false // no assistant to instruct
		}
		rule := strings.TrimPrefix(strings.TrimPrefix(text, "请"), "你")
		return Candidate{
			Content:   finishContent(name + "要求：" + chineseThirdPerson(rule)),
			Type:      imprint.MemoryInstruction,
			Priority:  80,
			SceneName: HeuristicSceneInstructionZH,
		}, true
	}
	personaOf := func(text string, prio int) (Candidate, bool) {
		return Candidate{
			Content:   finishContent(chineseThirdPerson(text)),
			Type:      imprint.MemoryPersona,
			Priority:  prio,
			SceneName: HeuristicScenePersonaZH,
		}, true
	}
	persona := func(prio int) (Candidate, bool) { return personaOf(text, prio) }
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
		c := Candidate{
			Content:   finishContent(chineseThirdPerson(text)),
			Type:      imprint.MemoryEpisodic,
			Priority:  65,
			SceneName: HeuristicSceneEpisodicZH,
		}
		if timeExpr != "" {
			c.Priority = 70
			if d, ok := relativeDayZH(timeExpr, ts); ok {
				c.Metadata.ActivityStartTime = d.Format(time.DateOnly)
			}
		}
		return c, true
	}
	return Candidate{}, false
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

var zhDigits = map[rune]int{'一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9, '十': 10}
var zhWeekdays = map[rune]time.Weekday{'一': time.Monday, '二': time.Tuesday, '三': time.Wednesday, '四': time.Thursday,
	'五': time.Friday, '六': time.Saturday, '日': time.Sunday, '天': time.Sunday}

// relativeDayZH is keyword.RelativeDay for Chinese time words.
func relativeDayZH(expr string, ts time.Time) (time.Time, bool) {
	if ts.IsZero() {
		return time.Time{}, false
	}
	day := time.Date(ts.UTC().Year(), ts.UTC().Month(), ts.UTC().Day(), 0, 0, 0, 0, time.UTC)
	switch expr {
	case "今天", "今晚", "今早", "今日", "刚才", "刚刚":
		return day, true
	case "昨天", "昨晚", "昨日":
		return day.AddDate(0, 0, -1), true
	case "前天":
		return day.AddDate(0, 0, -2), true
	case "大前天":
		return day.AddDate(0, 0, -3), true
	case "明天", "明晚":
		return day.AddDate(0, 0, 1), true
	case "后天":
		return day.AddDate(0, 0, 2), true
	case "上周", "上星期":
		return day.AddDate(0, 0, -7), true
	case "下周", "下星期":
		return day.AddDate(0, 0, 7), true
	}
	monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	switch expr {
	case "上周末":
		return monday.AddDate(0, 0, -2), true
	case "这周末", "周末":
		return monday.AddDate(0, 0, 5), true
	case "下周末":
		return monday.AddDate(0, 0, 12), true
	}
	rs := []rune(expr)
	if strings.HasSuffix(expr, "天前") || strings.HasSuffix(expr, "天后") {
		n := 0
		for _, r := range rs[:len(rs)-2] {
			switch {
			case r >= '0' && r <= '9':
				n = n*10 + int(r-'0')
			case r == '十':
				if n == 0 {
					n = 10
				} else {
					n *= 10
				}
			default:
				n += zhDigits[r]
			}
			if n > 10000 {
				return time.Time{}, false
			}
		}
		if strings.HasSuffix(expr, "天前") {
			n = -n
		}
		return day.AddDate(0, 0, n), true
	}
	if len(rs) >= 2 {
		wd, ok := zhWeekdays[rs[len(rs)-1]]
		if !ok {
			return time.Time{}, false
		}
		offset := (int(wd) + 6) % 7 // days after Monday
		switch {
		case strings.HasPrefix(expr, "上"):
			return monday.AddDate(0, 0, offset-7), true
		case strings.HasPrefix(expr, "下"):
			return monday.AddDate(0, 0, offset+7), true
		default: // 周五, 这周五, 本周五, 星期五: this week's
			return monday.AddDate(0, 0, offset), true
		}
	}
	return time.Time{}, false
}
