package server

import (
	"math"
	"time"

	"carphoto/video"
)

// A job's Retry-After is held between these: never more than 30 looks a
// minute (half of the default rate limit, which every look counts
// toward), never a wait so long that a short job sits done unseen.
const (
	minJobPoll = 2 * time.Second
	maxJobPoll = 30 * time.Second
)

// jobRetryAfter is the Retry-After of an unfinished job at now: the seconds
// until a look is worth it. While it runs, half of the time its progress
// says is left (the time each frame took so far, times the frames left),
// so a client that follows it looks a few times as the end nears, not once
// a second; but never more than half of the time the job has run (or
// waited, while queued): a start slower than the rest (the networks
// loading, ffmpeg starting) makes the first estimates long, and a client
// told to wait them would see the job done long after it was. So a client
// sees the job done less than half of its time after its end, and after a
// good estimate, within a few seconds.
func jobRetryAfter(j *video.Job, now time.Time) int {
	since := j.Created
	if j.Status == video.Processing && !j.Started.IsZero() {
		since = j.Started
	}
	elapsed := now.Sub(since)
	wait := elapsed / 2
	if j.Status == video.Processing && !j.Started.IsZero() && j.FramesDone > 0 {
		left := max(j.FramesTotal-j.FramesDone, 0)
		wait = min(wait, time.Duration(float64(elapsed)*float64(left)/float64(j.FramesDone)/2))
	}
	wait = min(max(wait, minJobPoll), maxJobPoll)
	return int(math.Ceil(wait.Seconds()))
}
