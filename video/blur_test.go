package video

import (
	"bytes"
	"context"
	"image"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"carphoto/imageops"
	"carphoto/internal/testenv/videotest"
)

func needFFmpeg(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skip(err.Error())
	}
}

// lumaFrames decodes a video's frames as grey images.
func lumaFrames(t *testing.T, path string, w, h int) []*image.Gray {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "gray", "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	var frames []*image.Gray
	r := bytes.NewReader(out)
	for {
		g := image.NewGray(image.Rect(0, 0, w, h))
		if _, err := io.ReadFull(r, g.Pix); err != nil {
			break
		}
		frames = append(frames, g)
	}
	return frames
}

// detail is the mean absolute Laplacian of g over r: the fine detail that
// makes characters readable.
func detail(g *image.Gray, r image.Rectangle) float64 {
	r = r.Intersect(g.Rect.Inset(1))
	sum := 0.0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := 4*float64(g.GrayAt(x, y).Y) - float64(g.GrayAt(x-1, y).Y) - float64(g.GrayAt(x+1, y).Y) -
				float64(g.GrayAt(x, y-1).Y) - float64(g.GrayAt(x, y+1).Y)
			sum += math.Abs(c)
		}
	}
	return sum / float64(r.Dx()*r.Dy())
}

// Every frame of a pan across a plate comes out with the plate's detail
// gone, and the video keeps its size, frame rate, duration and audio.
func TestBlurHidesThePlateInEveryFrame(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	clip := videotest.Make(t, dir)
	ctx := context.Background()
	info, err := Probe(ctx, clip)
	if err != nil {
		t.Fatal(err)
	}
	if info.Width != videotest.W || info.Height != videotest.H || math.Abs(info.FPS-videotest.FPS) > 0.01 || !info.Audio {
		t.Fatalf("probe of the clip: %+v", info)
	}
	out := filepath.Join(dir, "out.mp4")
	var calls int
	start := time.Now()
	hidden, err := Blur(ctx, clip, out, info, Options{Style: imageops.StyleBlur, Progress: func(done, total int) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d frames of %dx%d in %v (%.1f fps), %d plate sightings hidden", videotest.Frames, videotest.W, videotest.H,
		time.Since(start).Round(time.Millisecond), videotest.Frames/time.Since(start).Seconds(), hidden)
	got, err := Probe(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if got.Width != info.Width || got.Height != info.Height || math.Abs(got.FPS-info.FPS) > 0.01 ||
		math.Abs(got.Duration-info.Duration) > 0.25 || !got.Audio {
		t.Errorf("output %+v, input %+v: size, frame rate, duration or audio not kept", got, info)
	}
	if calls == 0 {
		t.Errorf("no progress was reported")
	}
	before, after := lumaFrames(t, clip, videotest.W, videotest.H), lumaFrames(t, out, videotest.W, videotest.H)
	if len(after) != len(before) {
		t.Fatalf("%d frames out of %d", len(after), len(before))
	}
	worst := 0.0
	for i := range before {
		plate := videotest.Plate.Sub(videotest.Offset(i)).Inset(3) // its characters, inside its frame
		ratio := detail(after[i], plate) / detail(before[i], plate)
		worst = max(worst, ratio)
		if ratio > 0.3 {
			t.Errorf("frame %d: the plate keeps %.0f%% of its detail: readable", i, 100*ratio)
		}
	}
	t.Logf("the most detail a frame's plate kept: %.0f%%", 100*worst)
	// Away from the plate the picture is the same (within the codec's noise).
	away := image.Rect(20, 20, 220, 120)
	if d0, d1 := detail(before[0], away), detail(after[0], away); d1 < 0.6*d0 {
		t.Errorf("detail away from the plate fell from %.1f to %.1f", d0, d1)
	}
}

// A file that is not a video is refused as the client's mistake.
func TestProbeRefusesNonVideo(t *testing.T) {
	needFFmpeg(t)
	path := filepath.Join(t.TempDir(), "x.mp4")
	os.WriteFile(path, []byte("not a video at all"), 0o600)
	if _, err := Probe(context.Background(), path); err == nil {
		t.Fatal("a text file probed as a video")
	}
}

// BenchmarkBlur1080p reports frames per second for a 1920×1080 clip (the
// test clip scaled up), decode and encode included; run it under
// `taskset -c 0` for one core.
func BenchmarkBlur1080p(b *testing.B) {
	if err := Available(); err != nil {
		b.Skip(err.Error())
	}
	dir := b.TempDir()
	clip := videotest.Make(b, dir)
	big := filepath.Join(dir, "clip1080.mp4")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-y", "-i", clip, "-vf", "scale=1920:1080",
		"-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-c:a", "copy", big).CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	info, err := Probe(context.Background(), big)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Blur(context.Background(), big, filepath.Join(dir, "out.mp4"), info, Options{Style: imageops.StyleBlur}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(info.Frames*b.N)/b.Elapsed().Seconds(), "frames/s")
}
