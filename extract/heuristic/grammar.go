package heuristic

import (
	"strings"
	"unicode"
	"unicode/utf8"

	imprint "github.com/imprint-dev/imprint"
)

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
	s = imprint.OneLine(s)
	s = strings.TrimRight(s, " ,;:-–—")
	if utf8.RuneCountInString(s) > maxContent {
		rs := []rune(s)[:maxContent]
		cut := string(rs)
		if i := strings.LastIndexByte(cut, ' '); i > maxContent/2 {
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

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
