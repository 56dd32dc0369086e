// Package video tests video jobs end to end: video-blur, its limits,
// webhooks, idempotency and the S3 store, and (-tags measure) its pace
// beside ffmpeg.
//
// Its tests run carphoto end to end through internal/testenv/e2etest, on
// Redis database 13 of a shared real Redis (REDIS_URL), or an embedded one.
package video
