// Package video tests video jobs end to end: video-blur, its pace, limits, webhooks and the S3 store.
//
// Its tests run carphoto end to end through internal/testenv/e2etest, on
// Redis database 13 of a shared real Redis (REDIS_URL), or an embedded
// one.
package video
