// Package video is video-blur's side of carphoto: a job that hides the
// licence plates of an uploaded video, from upload to a settled hold.
//
//   - probe.go: ffprobe says what the video is (streams, size, frame rate,
//     duration), refused before any work when past the limits.
//   - blur.go: ffmpeg decodes the video to raw frames through a pipe,
//     imageops' frame operation finds and hides the plates on key frames,
//     the plates are carried between them, and a second ffmpeg encodes the
//     frames, with the original's audio, to an MP4.
//   - store.go, s3.go: where uploads and results wait (a directory, or an
//     S3 bucket shared by web and workers).
//   - job.go: a job's record in Redis and its lifecycle (queued,
//     processing, done, failed).
//   - webhook.go: the signed webhook sent when a job ends.
//   - settle.go: a job's end and its hold, captured or released, settled
//     once, in one place (Jobs.End).
package video
