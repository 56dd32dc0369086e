// Package browser tests the pages in a real browser (Debian's Chromium) and
// the example clients (Python, Node, shell) against a running service.
//
// Its tests run carphoto end to end through internal/testenv/e2etest, on
// Redis database 14 of a shared real Redis (REDIS_URL), or an embedded one.
package browser
