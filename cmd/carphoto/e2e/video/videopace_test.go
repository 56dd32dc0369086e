//go:build measure

package video

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/videotest"
	"carphoto/video"
)

// TestVideoPace is a measurement, run by hand (CARPHOTO_VIDEO_PACE=1): a
// 10 s 1080p25 clip (a dash-cam photo panned slowly, one plate in view)
// through the service, submit to done, one video worker, beside ffmpeg
// decoding and re-encoding the same clip with the service's encoder
// settings, in the same run. It logs both wall times and CPU times and
// their ratios.
func TestVideoPace(t *testing.T) {
	if os.Getenv("CARPHOTO_VIDEO_PACE") != "1" {
		t.Skip("a measurement: set CARPHOTO_VIDEO_PACE=1 to run it")
	}
	if err := video.Available(); err != nil {
		t.Skip(err.Error())
	}
	dir := t.TempDir()
	clip := videotest.MakeClip(t, filepath.Join(dir, "pan1080.mp4"), 1920, 1080, 25,
		videotest.Pan(videotest.LoadPhoto(t, videotest.Photo0001), 250, 100, 100, 300, 150, 2))
	data, err := os.ReadFile(clip.Path)
	if err != nil {
		t.Fatal(err)
	}
	cpu0 := cpuTime()
	start := time.Now()
	if out, err := exec.Command("ffmpeg", "-v", "error", "-nostdin", "-y", "-i", clip.Path,
		"-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p",
		"-c:a", "aac", "-b:a", "160k", "-movflags", "+faststart", filepath.Join(dir, "ffmpeg.mp4")).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	ffmpeg, ffmpegCPU := time.Since(start), cpuTime()-cpu0

	// Polled every 50 ms: the key may call far more than the default 60
	// a minute, which would hold the answer back.
	s := e2etest.StartService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "VIDEO_WORKER_CONCURRENCY": "1", "RATE_LIMIT_PER_MINUTE": "100000"})
	_, key := s.Account(t, 10)
	cpu0 = cpuTime()
	start = time.Now()
	status, _, body := e2etest.Post(t, s.URL+"/v1/video-blur", key, e2etest.File("video", data))
	if status != 202 {
		t.Fatalf("submit: %d %s", status, body)
	}
	var sub struct{ ID string }
	json.Unmarshal(body, &sub)
	var j e2etest.JobStatus
	var told []retryAfterAt // the job's Retry-After at each look
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		_, h, body := e2etest.Do(t, http.MethodGet, s.URL+"/v1/jobs/"+sub.ID, key, "", nil)
		j = e2etest.JobStatus{}
		json.Unmarshal(body, &j)
		ra, _ := strconv.Atoi(h.Get("Retry-After"))
		told = append(told, retryAfterAt{time.Since(start), ra, j.Status == "done" || j.Status == "failed"})
		if j.Status == "done" || j.Status == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s after 5 min", j.Status)
		}
	}
	service, serviceCPU := time.Since(start), cpuTime()-cpu0
	if j.Status != "done" {
		t.Fatalf("job ended %+v", j)
	}
	t.Logf("10 s 1080p25, %d frames: ffmpeg decode+encode %.2f s (%.2f s CPU), video-blur submit to done %.2f s (%.2f s CPU, the test's client and service with their ffmpegs): %.2f× the wall time, %.2f× the CPU time",
		len(clip.Frames), ffmpeg.Seconds(), ffmpegCPU, service.Seconds(), serviceCPU,
		service.Seconds()/ffmpeg.Seconds(), serviceCPU/ffmpegCPU)
	polls, late, seen := followRetryAfter(told)
	t.Logf("a client that looks 2 s after submitting, then as each answer's Retry-After says: %d polls (%d calls with the submission and the MP4), the job seen done %.1f s after it was; its looks: %s",
		polls, polls+2, late.Seconds(), strings.Join(seen, ", "))
}

// retryAfterAt is what a look at a job found, at a time from its submission:
// the Retry-After it answered, or that it was over.
type retryAfterAt struct {
	at    time.Duration
	after int
	over  bool
}

// followRetryAfter replays a client on the looks of a job taken every
// 50 ms: its first look 2 s after submitting, each next one as the last
// answer's Retry-After said. It returns its polls and how long after the
// job's end it saw it, and at each look the time and the Retry-After.
func followRetryAfter(looks []retryAfterAt) (polls int, late time.Duration, seen []string) {
	next := 2 * time.Second
	for _, l := range looks {
		if l.at < next && !l.over {
			continue
		}
		polls++
		if l.over {
			seen = append(seen, fmt.Sprintf("%.1f s: over", max(next, l.at).Seconds()))
			return polls, max(next, l.at) - l.at, seen
		}
		seen = append(seen, fmt.Sprintf("%.1f s: %d", l.at.Seconds(), l.after))
		next = l.at + time.Duration(max(l.after, 1))*time.Second
	}
	return polls, 0, seen
}

// cpuTime is the user and system CPU seconds of this process and of its
// children that have ended.
func cpuTime() float64 {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return sec(self.Utime) + sec(self.Stime) + sec(kids.Utime) + sec(kids.Stime)
}
