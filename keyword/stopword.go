package keyword

import "strings"

// IsStopWord reports whether w, in lower case, is an English function word
// too common to tell records apart ("the", "did", "when", ...). Keyword
// queries drop them: ORed with the words that matter, each one matches
// most of the corpus and drags unrelated records into the ranking. Stems
// of content words are never stop words, and neither is any non-English or
// CJK term.
// "may" is not one: it is also the month.
func IsStopWord(w string) bool { return stopWords[w] }

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if nor so yet of to in on at by for with from as
		into onto upon about above below after before between through during under over off out up down
		again further then once here there when where why how what which who whom whose
		is are was were be been being am do does did doing done have has had having
		i me my mine myself we us our ours ourselves you your yours yourself yourselves
		he him his himself she her hers herself it its itself they them their theirs themselves
		this that these those such same other own both each few more most some any all
		no not only very too just than also s t d ll m re ve
		can could will would shall should might must ought
		let lets get got
		please thanks thank yes yeah ok okay oh hey hi hello`) {
		m[w] = true
	}
	return m
}()
