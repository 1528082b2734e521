package heuristic

import (
	"regexp"
	"slices"
	"strings"
)

// enWords are the lowercased ASCII words of a sentence, split where the
// patterns' \b splits. A pattern that needs a word as a whole word (any
// case) cannot match a sentence without it, so the patterns are only run
// when has or hasAny says their words are there: most sentences lack most
// of them, and each skipped pattern is a regular expression pass saved.
// Only the words of enVocab are kept, as bits, so splitting a sentence
// allocates nothing but its first word.
type enWords struct {
	// all makes every word present: no pattern is skipped.
	all   bool
	first string
	bits  [enVocabMax / 64]uint64
}

// enVocab numbers the words the gates ask about (has, hasAny).
// TestGateWordsAreInTheVocabulary checks that every word the gates name
// is here; one that is not would make its gate always open (slower, never
// wrong).
var enVocab = map[string]int{}

const enVocabMax = 320

func init() {
	for _, w := range strings.Fields(enVocabWords) {
		if _, ok := enVocab[w]; !ok {
			enVocab[w] = len(enVocab)
		}
	}
	if len(enVocab) > enVocabMax {
		panic("heuristic: enVocab has more words than enWords has bits")
	}
}

// enVocabWords are the words the gates of the English patterns ask about.
const enVocabWords = `a addicted adore again ago aim all allergic allergy always am ambition an any anymore anytime are
	assistant based been birthday born call celiac come crazy dad dear default detest diabetic dislike divorced dream
	each eat engaged enjoy ever every everything fan father favorite favourite forward from future gluten goal going got
	grandparent grew had hate have here home homeland hometown i important in into keen lactose last lately like live
	lived living love m major majoring married me mission mom more mother moved mum must my name need never next
	normally now obsessed often on other parent passion passionate plan precious prefer pregnant rarely re recently
	relocated retired rule should single special stand stop study studying teach teaching this time to today tomorrow
	tonight usually vegan vegetarian we whenever widowed work working yesterday you
	` + enFamilyWords + ` ` + enHelpsVerbs

// enFamilyWords are the ASCII words of enFamilyNoun ("fiancé" is "fianc"
// to \b).
const enFamilyWords = `wife husband partner spouse kid kids children son sons daughter daughters mom mum mother dad father
	parents brother brothers sister sisters siblings family dog dogs cat cats pet pets boyfriend girlfriend fianc fiance
	fiancee grandma grandmother grandpa grandfather baby twins`

// enFamilyNouns and enHelpsMeVerbs are the words one of which enFamily
// and enHaveFamily, and enHelpsMe, need.
var enFamilyNouns, enHelpsMeVerbs = strings.Fields(enFamilyWords), strings.Fields(enHelpsVerbs)

// enHelpsVerbs are the verbs of enHelpsMe.
const enHelpsVerbs = `helps help helped has have gives give gave brings bring brought motivates motivate inspires inspire
	relaxes calms energizes`

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
	if foldsOntoASCII(text) {
		return enWords{all: true}
	}
	var w enWords
	var buf [16]byte
	for i := 0; i < len(text); {
		if !isASCIIWord(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isASCIIWord(text[j]) {
			j++
		}
		if i == 0 {
			w.first = asciiLower(text[:j])
		}
		if j-i <= len(buf) {
			lw := buf[:j-i]
			for k := range lw {
				lw[k] = lowerASCII(text[i+k])
			}
			if n, ok := enVocab[string(lw)]; ok {
				w.bits[n/64] |= 1 << (n % 64)
			}
		}
		i = j
	}
	return w
}

func isASCIIWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiLower returns s with its ASCII capitals lowercased and every other
// byte kept, so that it has the same length and byte positions as s. It
// allocates only when s has a capital.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = lowerASCII(b[j])
			}
			return string(b)
		}
	}
	return s
}

// has reports whether word (lowercase) is one of the sentence's words.
func (w *enWords) has(word string) bool {
	if w.all {
		return true
	}
	n, ok := enVocab[word]
	return !ok || w.bits[n/64]&(1<<(n%64)) != 0
}

// hasAny reports whether any of words is one of the sentence's words.
func (w *enWords) hasAny(words ...string) bool {
	if w.all {
		return true
	}
	for _, word := range words {
		if w.has(word) {
			return true
		}
	}
	return false
}

// startsWith reports whether the sentence's first word is one of words
// (lowercase): it starts with that word, and no word character follows.
func (w *enWords) startsWith(words ...string) bool {
	return w.all || slices.Contains(words, w.first)
}

// startsWithPrefix reports whether the sentence starts with one of
// prefixes (lowercase), whole words or not.
func (w *enWords) startsWithPrefix(prefixes ...string) bool {
	return w.all || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(w.first, p) })
}

// mayMatch is a necessary condition for any English pattern to match.
func (w *enWords) mayMatch() bool {
	return w.all || enStarters[w.first] || w.hasAny(enTriggers...)
}

// clausePattern is a pattern every match of which starts with one of a
// few words, at a word's start (`\b(?:I|we)\s+…`): instead of scanning
// the whole sentence, findClause tries the pattern anchored at each such
// word.
type clausePattern struct {
	re *regexp.Regexp
	// at is re anchored at the start of the text.
	at *regexp.Regexp
	// first are the lowercase ASCII words a match of re starts with.
	first []string
}

// newClausePattern compiles expr, whose matches all start at the start of
// one of the ASCII words first (lowercase), in any case.
func newClausePattern(expr string, first ...string) clausePattern {
	return clausePattern{re: regexp.MustCompile(expr), at: regexp.MustCompile(`^(?:` + expr + `)`), first: first}
}

// startsWith reports whether word, an ASCII word, is one of p.first in
// any case.
func (p clausePattern) startsWith(word string) bool {
	for _, f := range p.first {
		if len(f) == len(word) && strings.EqualFold(f, word) {
			return true
		}
	}
	return false
}

// matches calls yield with the successive non-overlapping matches of p.re
// in text, as p.re.FindAllStringSubmatchIndex gives them, until it returns
// false; w are text's words. Since every match starts at one of p.first,
// the pattern is tried anchored at each of those words only, from the end
// of the previous match on: the leftmost match is the first word where
// the anchored pattern matches, and a pattern anchored at a word's start
// sees what it sees there in the whole text (\b holds before a word, and
// the rest looks only ahead).
func (p clausePattern) matches(text string, w *enWords, yield func(m []int) bool) {
	if w.all {
		for _, m := range p.re.FindAllStringSubmatchIndex(text, -1) {
			if !yield(m) {
				return
			}
		}
		return
	}
	end := 0
	for i := 0; i < len(text); {
		if !isASCIIWord(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isASCIIWord(text[j]) {
			j++
		}
		if i >= end && p.startsWith(text[i:j]) {
			if m := p.at.FindStringSubmatchIndex(text[i:]); m != nil {
				for k := range m {
					if m[k] >= 0 {
						m[k] += i
					}
				}
				if !yield(m) {
					return
				}
				end = m[1]
			}
		}
		i = j
	}
}
