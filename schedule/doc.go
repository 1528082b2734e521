// Package schedule runs imprint's durable background jobs (capture of a
// closed episode, extraction of a session, embedding retries) from an
// imprint.JobStore: a Scheduler claims due jobs, runs their handlers on a
// bounded set of workers, retries failures with exponential backoff and
// jitter, recovers the jobs of a crashed process at start and hands
// unfinished jobs back on shutdown. A Planner decides when work is due:
// it finalizes idle episodes and enqueues one extraction job per session
// that is due or has gone quiet.
//
// On SQLite the jobs live in the store's own jobs table rather than River:
// River's SQLite driver is early-stage, and a table written in the same
// transaction as the episode it captures is what makes "finalize and
// enqueue" atomic.
package schedule
