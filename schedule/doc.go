// Package schedule runs imprint's durable background jobs (capture of a
// closed episode, extraction of a session, embedding retries) from an
// imprint.JobStore: a Scheduler claims due jobs, runs their handlers on a
// bounded set of workers, retries failures with exponential backoff and
// jitter, recovers the jobs of a crashed process at start and hands
// unfinished jobs back on shutdown. A Planner decides when work is due:
// it finalizes idle episodes and enqueues one extraction job per session
// that is due or has gone quiet.
//
// Two engines implement Engine. River, the default (jobs.engine: river),
// is generic over the store's transaction type: it runs jobs through the
// River driver package node gives it (riversqlite on the store's writer
// connection; riverpgxv5 would do for PostgreSQL) and is installed as the
// store's imprint.JobEngine, so that a job is inserted with River's
// InsertTx in the same transaction as the episode it captures; its job
// listings and stats use River's client API, never SQL on River's tables.
// Scheduler, over the store's own jobs table, is the alternative
// (jobs.engine: table). Package node wires one of them and, when it starts
// River, moves the table's unfinished jobs over; this package does not
// import the store. Both keep at most one extraction per session in
// flight.
package schedule
