package heuristic

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/keyword"
)

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

func englishSentence(raw string, sp speaker) (imprint.Candidate, bool) {
	text, ok := englishClean(raw)
	if !ok {
		return imprint.Candidate{}, false
	}
	if sp.listener != "" {
		if text, ok = dropAddress(text, sp.listener); !ok {
			return imprint.Candidate{}, false
		}
	}
	w := newEnWords(text)
	if !w.mayMatch() {
		return imprint.Candidate{}, false
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
func englishPatterns(text string, sp speaker, w enWords) (imprint.Candidate, bool) {
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

func englishPersona(text string, sp speaker, w enWords) (imprint.Candidate, bool) {
	persona := func(at, prio int) (imprint.Candidate, bool) {
		return imprint.Candidate{
			Content:   finishContent(thirdPerson(clauseFrom(text, at), sp.name, false)),
			Type:      imprint.MemoryPersona,
			Priority:  prio,
			SceneName: ScenePersona,
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
	return imprint.Candidate{}, false
}

func englishEpisodic(text string, sp speaker, w enWords) (imprint.Candidate, bool) {
	ts := sp.ts
	var timeExpr string
	if w.hasAny("yesterday", "today", "tonight", "tomorrow", "this", "last", "next", "on", "other", "ago", "in",
		"recently", "lately", "now") {
		timeExpr = keyword.FindTimePhrase(text)
	}
	subj := w.hasAny("i", "we")
	episodic := func(clause string, future bool) (imprint.Candidate, bool) {
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
		c := imprint.Candidate{
			Content:   finishContent(clause),
			Type:      imprint.MemoryEpisodic,
			Priority:  prio,
			SceneName: SceneEpisodic,
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
	return imprint.Candidate{}, false
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
