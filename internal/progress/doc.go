// Package progress draws the progress of a long command (imprint import) on
// a terminal: a bar over the files to do, described by the counts of
// messages, episodes and memories so far, drawn at most once per throttle
// and cleared when finished. Off a terminal it draws nothing.
package progress
