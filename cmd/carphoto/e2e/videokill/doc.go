// Package videokill tests video jobs whose worker processes are killed: they wait on Asynq's recovery of a dead worker's task (its 30 s lease, its one-minute recoverer), about a minute a death, so they run in a package of their own beside the rest.
//
// Its tests run carphoto end to end through internal/testenv/e2etest, on
// Redis database 11 and 12 of a shared real Redis (REDIS_URL), or an embedded
// one.
package videokill
