package server

import (
	"fmt"
	"testing"
	"time"

	"carphoto/video"
)

// A client that follows Retry-After sees a 10 s clip's job through with
// far fewer than the 60 calls a minute its key may make, at any pace the
// job runs: the job's record moves as the worker writes it (progress
// every 15 frames, then half a second of muxing and storing), the client
// submits, waits 2 s, polls as told until the job is done, and fetches the
// MP4. The job's first frames come 3 s after it starts (the networks and
// ffmpeg starting), the rest at a steady pace. Every call counts toward the key's rate limit; the test counts them
// in every 60 s window, and how late the client sees the job done.
func TestJobRetryAfterBudget(t *testing.T) {
	for _, fps := range []int{25, 30} {
		frames := 10 * fps
		// Frames a second the worker processes: 1080p here is about 7, a
		// loaded machine 2, a small clip on a fast one 100.
		for _, pace := range []float64{2, 7, 25, 100} {
			for _, queued := range []time.Duration{0, 20 * time.Second} {
				// The first frames come slower: 3 s of the networks and
				// ffmpeg starting before the first is done.
				const warmup = 3 * time.Second
				name := fmt.Sprintf("%d frames at %g a second, %v queued", frames, pace, queued)
				t.Run(name, func(t *testing.T) {
					start := time.Unix(1_800_000_000, 0)
					processing := warmup + time.Duration(float64(frames)/pace*float64(time.Second))
					done := start.Add(queued + processing + 500*time.Millisecond)
					job := func(at time.Time) *video.Job {
						j := &video.Job{Status: video.Queued, FramesTotal: frames, Created: start}
						if since := at.Sub(start.Add(queued)); since >= 0 {
							j.Status, j.Started = video.Processing, start.Add(queued)
							j.FramesDone = min(int(max(since-warmup, 0).Seconds()*pace)/15*15, frames)
						}
						if !at.Before(done) {
							j.Status = video.Done
						}
						return j
					}
					calls := []time.Time{start} // the submission
					at := start.Add(2 * time.Second)
					for {
						calls = append(calls, at)
						j := job(at)
						if j.Status == video.Done {
							break
						}
						ra := jobRetryAfter(j, at)
						if ra < 2 || ra > 30 {
							t.Fatalf("Retry-After %d at %v (%d of %d frames), want 2 to 30", ra, at.Sub(start), j.FramesDone, frames)
						}
						at = at.Add(time.Duration(ra) * time.Second)
					}
					seen := at
					calls = append(calls, at) // the MP4
					most := 0
					for i, c := range calls {
						n := 0
						for _, d := range calls[i:] {
							if d.Sub(c) < time.Minute {
								n++
							}
						}
						most = max(most, n)
					}
					late := seen.Sub(done)
					t.Logf("%d calls (%d polls) over %v, at most %d in a minute; done seen %v late",
						len(calls), len(calls)-2, seen.Sub(start).Round(time.Second), most, late.Round(100*time.Millisecond))
					if most > 20 {
						t.Errorf("%d calls in one minute, want at most 20 of the 60 a key may make", most)
					}
					if total := done.Sub(start); late > max(3*time.Second, total/3) {
						t.Errorf("done after %v, seen %v late: want within a third of the job's time", total.Round(time.Second), late)
					}
				})
			}
		}
	}
}
