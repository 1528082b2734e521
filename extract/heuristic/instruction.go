package heuristic

import (
	"regexp"
	"strings"

	imprint "github.com/imprint-dev/imprint"
)

// An instruction is a directive to the assistant about its future
// behaviour: an imperative whose verb says how to work ("answer", "use",
// "show", "be concise") under a standing cue ("from now on", "always",
// "never", "don't ever", "… again"), or a request that the assistant
// always or never do something. Idioms ("never say never", "never give
// up"), exclamations ("always good to hear"), advice between people
// ("don't forget to stay positive") and one-off requests for the task at
// hand ("please use my credit card for the charges") are not.

var (
	// enFromNow opens a standing rule; the rest must be a directive.
	enFromNow = regexp.MustCompile(`(?i)^(?:please[\s,]+)?(?:from now on|from here on(?: out)?|going forward|moving forward|henceforth|in (?:the )?future|for all future \w+)\s*,?\s*(.+)$`)
	// enAlways is "always …" or "never …" at the start.
	enAlways = regexp.MustCompile(`(?i)^(?:please[\s,]+)?(?:always|never)\s+(.+)$`)
	// enRemember is "remember …", "don't forget …" and the like.
	enRemember  = regexp.MustCompile(`(?i)^(?:please[\s,]+)?(?:remember|keep in mind|note|don't forget|do not forget|dont forget)\s*,?\s*(?:that\s+)?(.+)$`)
	enDontEver  = regexp.MustCompile(`(?i)^(?:please[\s,]+)?(?:don't|do not|dont|never)\s+ever\s+(.+)$`)
	enDontAgain = regexp.MustCompile(`(?i)^(?:please[\s,]+)?(?:don't|do not|dont|stop)\s+(.+?)\s+(?:anymore|any more|again|ever again)$`)
	// enWantYouTo asks the listener to do something, with what follows.
	enWantYouTo = regexp.MustCompile(`(?i)\b(?:I want|I'd like|I need|I prefer|I would like|I'd prefer|I would prefer)\s+(?:you|the assistant)\s+to\s+(.+)$`)
	// enYouShould is "you should always/never …", with what follows.
	enYouShould = regexp.MustCompile(`(?i)\byou\s+(?:should|must|need to|have to)\s+((?:always|never)\s+.+)$`)
	// enImperative is an imperative with its verb first, for a standing
	// cue elsewhere in the sentence ("Answer in English from now on"), or
	// after a clause of when it applies ("Whenever you change the schema,
	// add a migration").
	enImperative = regexp.MustCompile(`(?i)^(?:please[\s,]+)?(?:(?:whenever|every time|each time|any ?time) you [^,]+,\s*)?(.+)$`)
	// enStopDoing is "stop <doing something>": a habit to drop.
	enStopDoing = regexp.MustCompile(`(?i)^(?:please[\s,]+)?stop\s+(\w+ing)\b`)

	// enStanding are the cues that make a directive a standing one.
	enStanding = regexp.MustCompile(`(?i)\b(?:always|never|from now on|from here on|going forward|in (?:the )?future|every time|each time|whenever|by default|as a rule|any ?time you|all the time|next time)\b`)
	// enRecurring also counts, for "remember to …", a rule tied to a
	// recurring moment ("before committing", "whenever you deploy").
	enRecurring = regexp.MustCompile(`(?i)\b(?:(?:before|after|when|while)\s+(?:\w+ing|you\s+\w+)|every\s+\w+|each\s+\w+)\b`)

	// enIdiom are sayings and encouragements that look like directives.
	enIdiom = regexp.MustCompile(`(?i)^(?:please[\s,]+|and\s+|just\s+)*(?:` +
		`never say never|never mind|(?:never|don't|do not) (?:ever )?give up|never quit|don't quit|` +
		`(?:never|don't|do not) stop (?:dreaming|believing|learning|trying|growing|pushing|smiling|going)|` +
		`(?:always|never) (?:look|stay) (?:on the bright side|positive|humble|strong|true)|always be (?:yourself|kind|there)|` +
		`(?:don't|do not|never) (?:ever )?(?:worry|be (?:afraid|scared|shy)|let (?:it|that|this|anything|anyone|anybody|them|the \w+|\w+) (?:get|bring|stop|hold|keep))|` +
		`(?:don't|do not|never) forget (?:your|who|where|what|how|that you)|` +
		`(?:never|don't|do not) miss a beat|keep (?:going|pushing|it up|up the good work|on going|moving|at it|trying|smiling|dreaming|your head up|the faith)|` +
		`take (?:care|a break|breaks|it easy|your time)|just do it` +
		`)\b`)

	// enDirectiveVerbs are verbs whose imperative tells an assistant how
	// to work.
	enDirectiveVerbs = wordSet(`add address answer apply approve ask assume attach avoid back begin bold book break build bump buy
		call cancel cap capitalize change charge check cite clean close comment commit compile confirm convert copy create cut debug default delete
		deploy describe do document double-check draft drop echo edit email end explain export fetch file fix flag follow
		format give greet group highlight include indent install keep label leave limit lint list log look make mark
		mention merge move name note number offer open order output paste pause pick pin post prefer prepare print
		prioritize proofread provide pull push put quote rebase recommend refer refactor reformat remove rename reply
		report request respond restart return review rewrite round run save say search send share show sign skip sort
		speak spell split squash stage start stick stop structure suggest summarise summarize tag talk test tell text
		track transfer translate treat trim type update upgrade use validate verify wait warn wrap write`)
	// enStyleWords may follow "be" in a directive ("always be concise").
	enStyleWords = wordSet(`brief concise short succinct terse polite formal informal casual direct explicit specific careful
		honest clear precise thorough detailed consistent more less extra`)
)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// englishInstruction reads a cleaned sentence said by sp as a standing
// instruction. ok is set with a candidate: an instruction, or a persona
// fact brought in by "remember that I …". directive is set, with no
// candidate, for a sentence shaped like a directive that is none: an idiom,
// or any directive between people, where there is no assistant.
//
// w are text's words: a pattern runs only when text has the words it
// needs (see enWords), the anchored ones when text starts with one of
// their first words.
func englishInstruction(text string, sp speaker, w enWords) (c imprint.Candidate, ok, directive bool) {
	if w.startsWith("please", "and", "just", "never", "don", "do", "always", "keep", "take") && enIdiom.MatchString(text) {
		return imprint.Candidate{}, false, true
	}
	var remember []string
	// "remember" and "note" need no word end: "Remembering to …".
	if w.startsWith("please", "keep", "don", "do", "dont") || w.startsWithPrefix("remember", "note") {
		remember = enRemember.FindStringSubmatch(text)
	}
	if m := remember; m != nil && isFirstPersonSubject(m[1]) {
		// "Remember that I'm vegetarian" tells a fact about the speaker,
		// when what follows is one ("remember, I'm always here for you"
		// is not).
		if _, ok := englishPersona(m[1], sp, newEnWords(m[1])); !ok {
			return imprint.Candidate{}, false, true
		}
		return imprint.Candidate{
			Content:   finishContent(thirdPerson(m[1], sp.name, false)),
			Type:      imprint.MemoryPersona,
			Priority:  75,
			SceneName: ScenePersona,
		}, true, false
	}
	if !isDirective(text, remember, w) {
		return imprint.Candidate{}, false, false
	}
	if sp.people {
		return imprint.Candidate{}, false, true
	}
	about := "the user"
	if sp.named {
		about = sp.name
	}
	return imprint.Candidate{
		Content:   finishContent("Standing instruction from " + about + ": " + lowerFirst(thirdPerson(text, about, true))),
		Type:      imprint.MemoryInstruction,
		Priority:  80,
		SceneName: SceneInstruction,
	}, true, false
}

// isDirective reports whether text is a standing directive to its
// listener (see the comment at the top of this file). remember is text's
// match of enRemember, which the caller has already run; w are text's
// words.
func isDirective(text string, remember []string, w enWords) bool {
	if w.startsWith("please", "from", "going", "moving", "in", "for") || w.startsWithPrefix("henceforth") {
		if m := enFromNow.FindStringSubmatch(text); m != nil {
			// "From now on I'll eat better" is a resolution.
			return !isFirstPersonSubject(m[1]) && (directiveStart(m[1]) || ruleClause(m[1]))
		}
	}
	if w.startsWith("please", "don", "do", "dont", "never") && w.has("ever") {
		if m := enDontEver.FindStringSubmatch(text); m != nil {
			return directiveStart(m[1])
		}
	}
	if w.startsWith("please", "always", "never") {
		if m := enAlways.FindStringSubmatch(text); m != nil {
			return directiveStart(m[1])
		}
	}
	if m := remember; m != nil {
		// "Remember to run the linter before committing"; "remember when
		// we …" reminisces, and "don't forget to book it" is for today.
		rest, ok := strings.CutPrefix(strings.ToLower(m[1]), "to ")
		return ok && directiveStart(rest) && (enStanding.MatchString(rest) || enRecurring.MatchString(rest))
	}
	if w.startsWith("please", "don", "do", "dont", "stop") && w.hasAny("anymore", "more", "again") {
		if m := enDontAgain.FindStringSubmatch(text); m != nil {
			// "Stop adding comments again": the verb is "stop".
			return directiveStart(m[1]) || strings.EqualFold(firstWord(text), "stop")
		}
	}
	if w.has("you") && w.hasAny("always", "never") && w.hasAny("should", "must", "need", "have") {
		if m := enYouShould.FindStringSubmatch(text); m != nil {
			return directiveStart(m[1])
		}
	}
	if w.has("i") && w.hasAny("you", "assistant") && w.has("to") {
		if m := enWantYouTo.FindStringSubmatch(text); m != nil {
			rest := strings.ToLower(m[1])
			switch firstWord(rest) {
			case "always", "never", "stop", "keep":
				return directiveStart(rest)
			}
			return directiveStart(rest) && enStanding.MatchString(rest)
		}
	}
	// "Stop adding summaries to your answers."
	if w.startsWith("please", "stop") && w.has("stop") {
		if m := enStopDoing.FindStringSubmatch(text); m != nil && gerundStem(strings.ToLower(m[1])) != "" {
			return true
		}
	}
	// "Answer in English from now on, please."
	if w.mayBeStanding() && enStanding.MatchString(text) {
		if m := enImperative.FindStringSubmatch(text); m != nil {
			return directiveStart(m[1])
		}
	}
	return false
}

// mayBeStanding is a necessary condition for enStanding to match the
// words' text: it has the words of one of its cues.
func (w enWords) mayBeStanding() bool {
	return w.hasAny("always", "never", "whenever", "future", "default", "rule", "anytime") ||
		w.has("from") && w.has("on") && w.hasAny("now", "here") ||
		w.has("going") && w.has("forward") ||
		w.has("time") && w.hasAny("every", "each", "any", "all", "next")
}

// directiveStart reports whether s opens with an imperative that says how
// to work: a directive verb ("use", "show me"), "be" with a style word, or
// a negation of one, after softeners ("please", "just"). A gerund opening
// a sentence is its subject ("Sharing … isn't always easy"), not a verb.
func directiveStart(s string) bool {
	f := strings.Fields(strings.ToLower(strings.Trim(s, " ,")))
	for len(f) > 0 {
		switch w := strings.Trim(f[0], ",.!"); w {
		case "please", "just", "also", "only", "kindly", "then", "so", "always", "never", "ever", "do", "don't",
			"dont", "not", "try", "to", "make", "sure", "remember", "let's":
			if w == "do" && len(f) > 1 && !enDirectiveVerbs[strings.Trim(f[1], ",.!")] && f[1] != "not" {
				return true // "do that again", "do the same"
			}
			if w == "make" && (len(f) < 2 || f[1] != "sure") {
				return true // "make the commit messages short"
			}
			f = f[1:]
		case "be":
			return len(f) > 1 && enStyleWords[strings.Trim(f[1], ",.!")]
		default:
			if i := strings.LastIndexByte(w, '-'); i > 0 {
				w = w[i+1:] // "force-push", "double-check"
			}
			return enDirectiveVerbs[w]
		}
	}
	return false
}

// ruleClause reports whether s, after "from now on", states a rule with a
// modal about the work ("every commit should be signed", "you'll answer
// in English", "no emojis").
func ruleClause(s string) bool {
	f := strings.Fields(strings.ToLower(s))
	if len(f) == 0 {
		return false
	}
	if f[0] == "no" {
		return len(f) <= 8 // "no emojis in commit messages"
	}
	for i, w := range f {
		if i > 3 {
			break
		}
		switch w {
		case "should", "must", "shall":
			return i > 0
		case "you'll", "you'd":
			return i == 0 && len(f) > 1 && directiveStart(strings.Join(f[1:], " "))
		case "will", "can", "need":
			return i == 1 && f[0] == "you" && len(f) > 2 && directiveStart(strings.Join(f[2:], " "))
		}
	}
	return false
}

// gerundStem returns the directive verb an -ing word is made of ("adding"
// → "add", "writing" → "write", "running" → "run"), or "".
func gerundStem(w string) string {
	stem, ok := strings.CutSuffix(w, "ing")
	if !ok || len(stem) < 2 {
		return ""
	}
	switch {
	case enDirectiveVerbs[stem]:
		return stem
	case enDirectiveVerbs[stem+"e"]:
		return stem + "e"
	case len(stem) > 2 && stem[len(stem)-1] == stem[len(stem)-2] && enDirectiveVerbs[stem[:len(stem)-1]]:
		return stem[:len(stem)-1]
	}
	return ""
}
