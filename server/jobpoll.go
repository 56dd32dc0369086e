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
// so a client that follows it looks a few times as the end nears, not
// once a second; with no progress yet, half of the time it has waited.
// Halving keeps a pace that picks up (a machine freed, a quiet stretch of
// the clip) from leaving a done job unseen for long.
func jobRetryAfter(j *video.Job, now time.Time) int {
	var wait time.Duration
	switch {
	case j.Status == video.Processing && !j.Started.IsZero() && j.FramesDone > 0:
		elapsed := now.Sub(j.Started)
		left := max(j.FramesTotal-j.FramesDone, 0)
		wait = time.Duration(float64(elapsed) * float64(left) / float64(j.FramesDone) / 2)
	case j.Status == video.Processing && !j.Started.IsZero():
		wait = now.Sub(j.Started) / 2
	default:
		wait = now.Sub(j.Created) / 2
	}
	wait = min(max(wait, minJobPoll), maxJobPoll)
	return int(math.Ceil(wait.Seconds()))
}
