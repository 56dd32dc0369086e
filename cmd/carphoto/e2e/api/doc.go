// Package api tests the API end to end: every operation, its refusals and
// errors, assets, the site and the docs pages, metrics, the queue
// dashboard and the admin commands.
//
// Its tests run carphoto end to end through internal/testenv/e2etest, on
// Redis database 5 of a shared real Redis (REDIS_URL), or an embedded one.
package api
