// Package resilience tests the service under failure and abuse: Redis blips
// and failover, workers and web processes killed or stopped, stalled
// uploads, hostile inputs, per-key queues.
//
// Its tests run carphoto end to end through internal/testenv/e2etest, on
// Redis database 15 of a shared real Redis (REDIS_URL), or an embedded one.
package resilience
