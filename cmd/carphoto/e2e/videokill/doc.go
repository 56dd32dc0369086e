// Package videokill tests video jobs whose worker processes are killed.
// They wait on Asynq's recovery of a dead worker's task (its 30 s lease,
// its one-minute recoverer), about a minute a death, mostly idle, so they
// run side by side in a package of their own, beside the rest.
//
// Its tests run carphoto end to end through internal/testenv/e2etest, on
// Redis databases 11 and 12, one per test, of a shared real Redis
// (REDIS_URL), or an embedded one.
package videokill
