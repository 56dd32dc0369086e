// Package money tests credits end to end: charged once per answer delivered,
// never for a failure, a hang-up or a retry.
//
// Its tests run carphoto end to end through internal/testenv/e2etest, on
// Redis database 10 of a shared real Redis (REDIS_URL), or an embedded one.
package money
