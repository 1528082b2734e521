// Package heuristic is the rule-based extractor: without an LLM it reads
// each sentence of a window's messages and proposes the persona,
// instruction and episodic memories its English and Chinese rules find.
// The files follow its concerns: sentences.go splits a message,
// english.go and instruction.go hold the English rules, chinese.go the
// Chinese ones, timephrases.go turns relative time phrases into dates,
// and grammar.go rewrites a first-person clause in the third person.
package heuristic
