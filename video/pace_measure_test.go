//go:build measure

package video

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"carphoto/imageops"
	"carphoto/internal/testenv/videotest"
)

var paceRuns = flag.Int("pace.runs", 5, "rounds of TestPaceBesideFFmpeg (each runs ffmpeg, then Blur)")

// TestPaceBesideFFmpeg measures Blur itself (no HTTP, no store) on
// TestVideoPace's clip (a 10 s 1080p25 pan over a dash-cam photo, one plate
// in view) beside ffmpeg decoding and re-encoding it with the same encoder
// settings, alternating, and logs each round's wall and CPU seconds and the
// medians. Run it with -cpuprofile to see where Blur's own time goes (the
// ffmpegs are other processes):
//
//	go test -tags measure ./video -run TestPaceBesideFFmpeg -v -pace.runs 5
func TestPaceBesideFFmpeg(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err.Error())
	}
	dir := t.TempDir()
	clip := videotest.MakeClip(t, filepath.Join(dir, "pan1080.mp4"), 1920, 1080, 25,
		videotest.Pan(videotest.LoadPhoto(t, videotest.Photo0001), 250, 100, 100, 300, 150, 2))
	info, err := Probe(context.Background(), clip.Path)
	if err != nil {
		t.Fatal(err)
	}
	var ff, bl, ffCPU, blCPU, ratios []float64
	for i := range *paceRuns {
		cpu0, start := cpuSeconds(), time.Now()
		if out, err := exec.Command("ffmpeg", "-v", "error", "-nostdin", "-y", "-i", clip.Path,
			"-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p",
			"-c:a", "aac", "-b:a", "160k", "-movflags", "+faststart", filepath.Join(dir, "ffmpeg.mp4")).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v: %s", err, out)
		}
		f, fc := time.Since(start).Seconds(), cpuSeconds()-cpu0
		cpu0, start = cpuSeconds(), time.Now()
		n, err := Blur(context.Background(), clip.Path, filepath.Join(dir, "blur.mp4"), info, Options{Style: imageops.StyleBlur})
		if err != nil {
			t.Fatal(err)
		}
		b, bc := time.Since(start).Seconds(), cpuSeconds()-cpu0
		load, _ := os.ReadFile("/proc/loadavg")
		t.Logf("round %d: ffmpeg %.2f s (%.2f CPU), Blur %.2f s (%.2f CPU), %d sightings hidden: %.2f× wall, %.2f× CPU; load %s",
			i+1, f, fc, b, bc, n, b/f, bc/fc, load[:14])
		ff, bl, ffCPU, blCPU, ratios = append(ff, f), append(bl, b), append(ffCPU, fc), append(blCPU, bc), append(ratios, b/f)
	}
	t.Logf("medians of %d: ffmpeg %.2f s (%.2f CPU), Blur %.2f s (%.2f CPU), ratio of the rounds %.2f× wall, %.2f× CPU",
		len(ff), median(ff), median(ffCPU), median(bl), median(blCPU), median(ratios), median(blCPU)/median(ffCPU))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
