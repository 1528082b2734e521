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
	enPrefer = newClausePattern(`(?i)\bI\s+`+enAdv+`(prefer|like|love|enjoy|adore|hate|dislike|detest|can't stand|cannot stand|don't like|do not like|don't enjoy|do not enjoy|can't live without)\s+(\S+)`, "i")
	// Objects of like/love that make a remark about the listener or the
	// moment, not a preference.
	enPreferSkip = map[string]bool{"you": true, "your": true, "yours": true, "it": true, "it's": true, "this": true, "that": true,
		"these": true, "those": true, "how": true, "when": true, "what": true, "seeing": true, "hearing": true, "talking": true,
		"chatting": true, "him": true, "her": true, "them": true, "us": true, "ya": true, "u": true, "having": true, "reading": true}
	enPassion   = newClausePattern(`(?i)\b(?:I'm|I am)\s+`+enAdv+`(?:passionate about|into|a (?:big |huge )?fan of|obsessed with|addicted to|crazy about|keen on)\s+\S`, "i")
	enIsPassion = regexp.MustCompile(`(?i)^[\w' ]{2,40}\s+(?:is|are)\s+(?:my|a) (?:passion|big passion|true passion|favorite thing|favourite thing)\b`)
	enFavorite  = newClausePattern(`(?i)\bmy\s+(?:all-time\s+)?(?:favorite|favourite)\s+[\w ]{1,30}?\s+(?:is|are|was)\s+\S`, "my")
	enName      = newClausePattern(`(?i)\b(?:my name is|my name's|(?:you can|please|just) call me)\s+\S`, "my", "you", "please", "just")
	enBirthday  = newClausePattern(`(?i)\bmy birthday is\s+\S`, "my")
	enIdentity  = newClausePattern(`(?i)\b(?:I'm|I am)\s+`+enAdv+`(?:a|an)\s+(\w+)`, "i")
	enIdentSkip = map[string]bool{"bit": true, "little": true, "lot": true, "big": true, "huge": true, "fan": true, "mess": true, "wreck": true, "sucker": true, "tad": true, "fast": true, "quick": true, "slow": true, "few": true, "great": true, "good": true, "total": true, "nervous": true, "couple": true}
	enWork      = newClausePattern(`(?i)\b(?:I|I'm|I am)\s+`+enAdv+`(?:work|working)\s+(?:as|at|for)\s+\S`, "i")
	enStudy     = newClausePattern(`(?i)\b(?:I|I'm|I am)\s+`+enAdv+`(?:study|studying|teach|teaching|major in|majoring in)\s+\S`, "i")
	enPlace     = newClausePattern(`(?i)\b(?:I|I'm|I am|I've|I have)\s+`+enAdv+`(?:live in|living in|lived in|moved to|grew up in|from|come from|was born in|relocated to|based in)\s+\S`, "i")
	// enLifelong is a lifelong trait: "I've always had a love for horses".
	enLifelong = newClausePattern(`(?i)\bI(?:'ve| have)\s+always\s+(loved|liked|enjoyed|had|felt|been|wanted|dreamed|dreamt)\s+(\S+)`, "i")
	// enHabit is a habit: "I always deploy with blue-green releases".
	enHabit = newClausePattern(`(?i)\bI\s+(?:always|usually|normally|never|often|rarely)\s+(\w+)\s+(\S+)`, "i")
	// enHabitSkip are verbs after "I always" that report a feeling or a
	// courtesy, not a habit.
	enHabitSkip = wordSet(`think thought feel felt wonder wondered know knew say said try tried mean meant hope hoped wish
		love like look find get got make want need appreciate forget remember am was have had do did will would can could`)
	// enDearToMe is "X is (so) important to me".
	enDearToMe   = regexp.MustCompile(`(?i)^([\w' ]{2,40}?)(?:'s|\s+is|\s+are)\s+(?:(?:super|pretty|quite|incredibly)\s+)?` + enAdv + `(?:important|special|precious|dear|everything)\s+to me\b`)
	enHomePlace  = regexp.MustCompile(`(?i)\bmy\s+(?:home country|hometown|home town|home state|homeland)\b`)
	enHealth     = newClausePattern(`(?i)\b(?:I'm|I am)\s+`+enAdv+`(?:allergic to|lactose intolerant|gluten intolerant|diabetic|celiac|vegetarian|vegan|pregnant|a vegetarian|a vegan)\b|\bI\s+`+enAdv+`(?:have|got)\s+(?:an?\s+)?(?:\w+\s+)?allergy\b|\bI\s+(?:can't|cannot|don't)\s+eat\s+\S`, "i")
	enFamilyNoun = `(?:wife|husband|partner|spouse|kids?|children|son|sons|daughter|daughters|mom|mum|mother|dad|father|parents|brother|brothers|sister|sisters|siblings|family|dog|dogs|cat|cats|pet|pets|boyfriend|girlfriend|fianc[eé]e?|grandma|grandmother|grandpa|grandfather|baby|twins)`
	enFamily     = newClausePattern(`(?i)\bmy\s+(?:\w+\s+)?`+enFamilyNoun+`(?:'s name)?\s+(?:is|are|was|were|has|have|had|just|got|went|turned|loves?|likes?|hates?|works?|lives?|started|finished|graduated|moved|passed|called)\b`, "my")
	enHaveFamily = newClausePattern(`(?i)\bI\s+(?:have|got)\s+(?:a|an|one|two|three|four|five|six|\d+)\s+(?:\w+\s+)?`+enFamilyNoun+`\b`, "i")
	enStatus     = newClausePattern(`(?i)\b(?:I'm|I am)\s+`+enAdv+`(?:married|engaged|divorced|widowed|single|retired|a (?:mom|mum|dad|mother|father|parent|grandparent|single mom|single dad))\b`, "i")
	enGoal       = newClausePattern(`(?i)\bmy\s+(?:\w+\s+)?(?:dream|goal|aim|ambition|passion|mission|plan)\s+(?:is|was)\s+\S`, "my")
	enHelpsMe    = regexp.MustCompile(`(?i)^([\w'&]+(?:\s+[\w'&]+){0,3})\s+` + enAdv + `(?:helps|help|helped|has helped|have helped|gives|give|gave|brings|bring|brought|motivates|motivate|inspires|inspire|relaxes|calms|energizes)\s+me\b`)
	enSubjSkip   = map[string]bool{"you": true, "your": true, "it": true, "this": true, "that": true, "these": true, "those": true, "he": true, "she": true, "they": true,
		"his": true, "her": true, "their": true, "which": true, "what": true, "who": true, "there": true, "everyone": true, "everything": true, "nothing": true,
		"we": true, "our": true, "i": true, "u": true, "thanks": true, "thank": true, "talking": true, "chatting": true}

	// Episodic and ongoing activities.
	enBeenDoing = newClausePattern(`(?i)\b(?:I've|I have|we've|we have)\s+`+enAdv+`been\s+`+enAdv+`(\w+ing)\b(\s+\S+)?`, "i", "we")
	enDoing     = newClausePattern(`(?i)\b(?:I'm|I am|we're|we are)\s+`+enAdv+`(\w+ing|gonna)\b(\s+\S+)?`, "i", "we")
	enFuture    = newClausePattern(`(?i)\b(?:I'm|I am|we're|we are)\s+`+enAdv+`(?:going to|gonna|planning to|planning on|about to|hoping to|off to)\b|\b(?:I|we)(?:'ll|\s+will)\b|\b(?:I|we)\s+(?:have|have got|got)\s+(?:a|an|my|our)\s+\w+`, "i", "we")
	enPast      = newClausePattern(`(?i)\b(?:I|we)\s+`+enAdv+`(\w+ed|went|got|took|made|had to|met|won|lost|bought|sold|built|began|became|wrote|drove|flew|ran|left|quit|found|gave|spent|taught|caught|brought|chose|ate|swam|sang|rode|broke|fell|grew|finally did|signed up|shut down|came back)\b(\s+\S+)?`, "i", "we")
	// enDated are events that say little without a time: "I had an
	// interview yesterday", "I've been to Paris".
	enDated       = newClausePattern(`(?i)\b(?:I|we)(?:\s+`+enAdv+`had|(?:'ve|\s+have)\s+`+enAdv+`been\s+to)\s+(\S+)`, "i", "we")
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

// findClause returns the start of the first match of p whose subject
// starts a clause and that ok accepts, or -1; w are text's words.
func findClause(p clausePattern, text string, w *enWords, ok func(m []int) bool) int {
	at := -1
	p.matches(text, w, func(m []int) bool {
		if clauseStart(text, m[0]) && (ok == nil || ok(m)) {
			at = m[0]
			return false
		}
		return true
	})
	return at
}

// findClauseIf is findClause when gate is true, else -1.
func findClauseIf(gate bool, p clausePattern, text string, w *enWords, ok func(m []int) bool) int {
	if !gate {
		return -1
	}
	return findClause(p, text, w, ok)
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
	text := raw
	if mayStartWith(raw, enFillerFirst, "hah", "aw") {
		text = enFiller.ReplaceAllString(raw, "")
	}
	text = strings.TrimSpace(text)
	if strings.Contains(text, "in'") {
		text = enDroppedG.ReplaceAllString(text, "${1}ing")
	}
	text = strings.TrimRight(text, " .,:-–—")
	if !hasFields(text, 3) || mayStartWith(text, enQuestionFirst) && enQuestionStart.MatchString(text) {
		return "", false
	}
	return text, true
}

// enFillerFirst are the first words of enFiller's fillers (and "hah…"
// and "aw…" for haha+ and aw+); enQuestionFirst those of enQuestionStart.
var (
	enFillerFirst = wordSet(`yeah yea yes yep yup so well oh ooh wow ok okay hah lol also and but btw by actually honestly
		anyway anyways hey hi hello um uh plus sure ah omg guess fun`)
	enQuestionFirst = wordSet(`what how why who whom whose where when which do did does are were can could would will have has
		is any wanna want`)
)

// mayStartWith is a necessary condition for a case-insensitive pattern
// anchored at the start, whose first word is one of first (or starts with
// one of prefixes) and ends where an ASCII word does, to match s: s's
// first ASCII word, lowercased, is one. Text with a character that
// case-folds onto an ASCII letter (U+017F, U+212A) always may.
func mayStartWith(s string, first map[string]bool, prefixes ...string) bool {
	j := 0
	for j < len(s) && isASCIIWord(s[j]) {
		j++
	}
	if j == 0 {
		return foldsOntoASCII(s)
	}
	var buf [16]byte
	if j > len(buf) {
		return true // "hahaaaaaaaaaaaaaaaa"
	}
	lw := buf[:j]
	for i := range lw {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lw[i] = c
	}
	if first[string(lw)] {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(string(lw), p) {
			return true
		}
	}
	return foldsOntoASCII(s)
}

// foldsOntoASCII reports whether s has a character that a
// case-insensitive regular expression matches to an ASCII letter: ſ
// (U+017F) to s, the Kelvin sign (U+212A) to k.
func foldsOntoASCII(s string) bool {
	return strings.Contains(s, "\u017f") || strings.Contains(s, "\u212a")
}

// hasFields reports whether s has at least n fields (strings.Fields).
func hasFields(s string, n int) bool {
	inField := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			inField = false
			continue
		}
		if !inField {
			inField = true
			if n--; n == 0 {
				return true
			}
		}
	}
	return n <= 0
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
	if c, ok, directive := englishInstruction(text, sp, w); ok || directive {
		return c, ok
	}
	if c, ok := englishPersona(text, sp, w); ok {
		return c, true
	}
	return englishEpisodic(text, sp, w)
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
		if at := findClause(enHealth, text, &w, nil); at >= 0 {
			return persona(at, 80)
		}
	}
	if w.hasAny("name", "call") {
		if at := findClause(enName, text, &w, nil); at >= 0 {
			return persona(at, 80)
		}
	}
	if subjI && w.hasAny("prefer", "like", "love", "enjoy", "adore", "hate", "dislike", "detest", "stand", "live") {
		if at := findClause(enPrefer, text, &w, func(m []int) bool {
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
		re   clausePattern
		gate bool
	}{
		{enPassion, subjI && w.hasAny("passionate", "into", "fan", "obsessed", "addicted", "crazy", "keen")},
		{enFavorite, subjMy && w.hasAny("favorite", "favourite")},
		{enWork, subjI && w.hasAny("work", "working")},
		{enPlace, subjI && w.hasAny("live", "living", "lived", "moved", "grew", "from", "come", "born", "relocated", "based")},
		{enStatus, subjI && w.hasAny("married", "engaged", "divorced", "widowed", "single", "retired", "mom", "mum", "dad",
			"mother", "father", "parent", "grandparent")},
		{enFamily, subjMy && w.hasAny(enFamilyNouns...)},
		{enHaveFamily, subjI && w.hasAny("have", "got") && w.hasAny(enFamilyNouns...)},
		{enBirthday, subjMy && w.has("birthday")},
	} {
		if !p.gate {
			continue
		}
		if at := findClause(p.re, text, &w, nil); at >= 0 {
			return persona(at, 70)
		}
	}
	if subjI && w.hasAny("a", "an") {
		if at := findClause(enIdentity, text, &w, func(m []int) bool { return !enIdentSkip[strings.ToLower(group(text, m, 1))] }); at >= 0 {
			return persona(at, 70)
		}
	}
	if w.hasAny("passion", "favorite", "favourite") {
		if m := enIsPassion.FindStringIndex(text); m != nil {
			return persona(0, 70)
		}
	}
	if subjI && w.hasAny("study", "studying", "teach", "teaching", "major", "majoring") {
		if at := findClause(enStudy, text, &w, nil); at >= 0 {
			return persona(at, 65)
		}
	}
	if subjMy && w.hasAny("dream", "goal", "aim", "ambition", "passion", "mission", "plan") {
		if at := findClause(enGoal, text, &w, nil); at >= 0 {
			return persona(at, 65)
		}
	}
	if subjMy && w.hasAny("home", "hometown", "homeland") && enHomePlace.MatchString(text) {
		return persona(0, 65) // the whole sentence says what the place is
	}
	if subjI && w.has("always") {
		if at := findClause(enLifelong, text, &w, func(m []int) bool {
			obj := strings.ToLower(strings.Trim(group(text, m, 2), `,."'!`))
			return !enPreferSkip[obj] && obj != "here" && obj != "there" && !strings.HasPrefix(obj, "you")
		}); at >= 0 {
			return persona(at, 65)
		}
	}
	if subjI && w.hasAny("always", "usually", "normally", "never", "often", "rarely") {
		if at := findClause(enHabit, text, &w, func(m []int) bool {
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
	if w.has("me") && w.hasAny(enHelpsMeVerbs...) {
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
		if at := findClause(enBeenDoing, text, &w, func(m []int) bool { return activityVerb(group(text, m, 1), group(text, m, 2)) }); at >= 0 {
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
		if isLifeEvent(clause) {
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
	if timeExpr != "" && subj && !isLifeEvent(text) {
		if at := findClause(enFuture, text, &w, nil); at >= 0 {
			return episodic(thirdPerson(clauseFrom(text, at), sp.name, false), true)
		}
	}
	if at := findClauseIf(subj, enPast, text, &w, func(m []int) bool {
		v := strings.ToLower(group(text, m, 1))
		if m[3] < len(text) && text[m[3]] == '\'' {
			return false // "won't", not "won"
		}
		return !enPastSkip[v] && objOK(m, 2)
	}); at >= 0 {
		return episodic(thirdPerson(clauseFrom(text, at), sp.name, false), false)
	}
	if at := findClauseIf(timeExpr != "" && subj && w.hasAny("had", "been"), enDated, text, &w, func(m []int) bool { return objOK(m, 1) }); at >= 0 {
		return episodic(thirdPerson(clauseFrom(text, at), sp.name, false), false)
	}
	if w.all || enStarters[w.first] { // enBareStart is anchored at a starter
		if m := enBareStart.FindStringSubmatchIndex(text); m != nil && objOK(m, 2) && !(m[3] < len(text) && text[m[3]] == '\'') {
			return episodic(thirdPerson(sp.name+" "+lowerFirst(text), sp.name, false), false)
		}
	}
	if at := findClauseIf(subj && w.hasAny("m", "am", "re", "are"), enDoing, text, &w, func(m []int) bool {
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

// enLifeEventLiterals are the lowercase literals one of which every match
// of enLifeEvent holds.
var enLifeEventLiterals = []string{"lost ", "got ", "new job", "graduated", "moved ", "adopt", "had ", "passed away",
	"retired", "started ", "diagnos", "surgery", "pregnant", "broke up"}

// isLifeEvent reports whether enLifeEvent matches s, running it only when
// s has one of its literals in any case (or a character that case-folds
// onto an ASCII letter).
func isLifeEvent(s string) bool {
	if !foldsOntoASCII(s) {
		lower := asciiLower(s)
		found := false
		for _, l := range enLifeEventLiterals {
			if strings.Contains(lower, l) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return enLifeEvent.MatchString(s)
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
