// Package video is video-blur's side of carphoto: a job that hides the
// licence plates of an uploaded video, from upload to a settled hold.
//
//   - probe.go: ffprobe says what the video is (streams, size, frame rate,
//     duration), refused before any work when past the limits.
//   - blur.go, looks.go, track.go: ffmpeg decodes the video to raw YUV
//     4:2:0 frames through a pipe, imageops' frame operation finds the
//     plates on the frames looked at (at least one a second), the plates
//     are tracked between looks by block matching, the hide is painted in
//     Y, Cb and Cr, and a second ffmpeg encodes the frames, with the
//     original's audio, to an MP4.
//   - uploads and results wait in the objstore package's store (a
//     directory, or an S3 bucket shared by web and workers).
//   - job.go: a job's record in Redis and its lifecycle (queued,
//     processing, done, failed).
//   - webhook.go: the signed webhook sent when a job ends.
//   - settle.go: a job's end and its hold, captured or released, settled
//     once, in one place (Jobs.End).
package video
