// Package videotest makes the test clip of the video tests: a pan across a
// labelled dash-cam photo, its plate always in view, with a tone as audio.
package videotest

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"context"
	"fmt"
	"image"
	"image/draw"
	"os/exec"
	"path/filepath"
	"testing"

	"carphoto/imageops/codec"
)

// The clip: Frames frames at FPS, W×H.
const (
	W, H   = 854, 480
	FPS    = 15
	Frames = 45
)

// Plate is the labelled plate in the photo (plates-dashcam-ro-0001.jpg).
var Plate = image.Rect(549, 486, 549+124, 486+30)

// Offset is where frame i's window starts in the photo: frame i shows the
// plate at Plate.Sub(Offset(i)).
func Offset(i int) image.Point {
	return image.Pt(100+300*i/(Frames-1), 120+100*i/(Frames-1))
}

// Make writes the clip as an MP4 (H.264 and AAC) in dir and returns its
// path. It skips the test where ffmpeg or the shared photos are missing
// (datasets.File).
func Make(t testing.TB, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed (apt-get install ffmpeg)")
	}
	data := datasets.ReadFile(t, "plates-dashcam-ro", "images/plates-dashcam-ro-0001.jpg")
	photo, err := codec.Decode(context.Background(), data, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "clip.mp4")
	cmd := exec.Command("ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgba",
		"-s", fmt.Sprintf("%dx%d", W, H), "-r", fmt.Sprint(FPS), "-i", "-",
		"-f", "lavfi", "-i", fmt.Sprintf("sine=frequency=440:duration=%g", float64(Frames)/FPS),
		"-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	frame := image.NewRGBA(image.Rect(0, 0, W, H))
	for i := range Frames {
		draw.Draw(frame, frame.Rect, photo.Image, Offset(i), draw.Src)
		if _, err := in.Write(frame.Pix); err != nil {
			t.Fatal(err)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("make clip: %v: %s", err, stderr.String())
	}
	return path
}
