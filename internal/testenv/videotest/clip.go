package videotest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"os/exec"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"

	"carphoto/imageops/codec"
	"carphoto/internal/testenv/datasets"
)

// Photo is a labelled dash-cam photo of plates-dashcam-ro and its plate.
type Photo struct {
	Image image.Image
	Plate image.Rectangle
}

// Photo0001 and Photo0002 are two dash-cam photos (1280×720) with one
// plate each, 124×30 and 157×42 pixels.
const (
	Photo0001 = "plates-dashcam-ro-0001.jpg"
	Photo0002 = "plates-dashcam-ro-0002.jpg"
)

var plates = map[string]image.Rectangle{
	Photo0001: image.Rect(549, 486, 549+124, 486+30),
	Photo0002: image.Rect(538, 550, 538+157, 550+42),
}

// LoadPhoto reads one of the photos above; it skips the test where the
// shared photos are missing.
func LoadPhoto(t testing.TB, name string) Photo {
	t.Helper()
	data := datasets.ReadFile(t, "plates-dashcam-ro", "images/"+name)
	img, err := codec.Decode(context.Background(), data, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return Photo{Image: img.Image, Plate: plates[name]}
}

// View is a frame's window on a photo: the frame's pixel (x, y) shows the
// photo's point (X + x/Scale, Y + y/Scale); at scale 1, (X, Y) is rounded
// to a pixel, so the frame is the photo's own pixels.
type View struct {
	Photo   Photo
	X, Y    float64
	Scale   float64
	Covered image.Rectangle // a black bar drawn over the frame there (none when empty)
}

// PlateAt is where the view's plate lies in the frame's coordinates,
// in the frame or not.
func (v View) PlateAt() image.Rectangle {
	p := v.Photo.Plate
	if v.Scale == 1 {
		return p.Sub(v.at())
	}
	return image.Rect(int(math.Floor((float64(p.Min.X)-v.X)*v.Scale)), int(math.Floor((float64(p.Min.Y)-v.Y)*v.Scale)),
		int(math.Ceil((float64(p.Max.X)-v.X)*v.Scale)), int(math.Ceil((float64(p.Max.Y)-v.Y)*v.Scale)))
}

// PlateIn is the part of the view's plate in a w×h frame.
func (v View) PlateIn(w, h int) image.Rectangle {
	return v.PlateAt().Intersect(image.Rect(0, 0, w, h))
}

// at is the photo's pixel at a scale-1 view's top-left: (X, Y) rounded.
func (v View) at() image.Point {
	return image.Pt(int(math.Round(v.X)), int(math.Round(v.Y)))
}

// Clip is a made clip: its file and each frame's view.
type Clip struct {
	Path   string
	W, H   int
	FPS    int
	Frames []View
}

// MakeClip writes an MP4 (H.264 crf 18 and an AAC tone) of w×h frames at
// fps to path, frame i drawn from views[i].
func MakeClip(t testing.TB, path string, w, h, fps int, views []View) Clip {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed (apt-get install ffmpeg)")
	}
	cmd := exec.Command("ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgba",
		"-s", fmt.Sprintf("%dx%d", w, h), "-r", fmt.Sprint(fps), "-i", "-",
		"-f", "lavfi", "-i", fmt.Sprintf("sine=frequency=440:duration=%g", float64(len(views))/float64(fps)),
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
	frame := image.NewRGBA(image.Rect(0, 0, w, h))
	for _, v := range views {
		draw.Draw(frame, frame.Rect, image.Black, image.Point{}, draw.Src)
		if v.Scale == 1 {
			// Whole pixels of the photo, as sharp as it is.
			draw.Draw(frame, frame.Rect, v.Photo.Image, v.at(), draw.Src)
		} else {
			s2d := f64.Aff3{v.Scale, 0, -v.X * v.Scale, 0, v.Scale, -v.Y * v.Scale} // photo → frame
			draw.BiLinear.Transform(frame, s2d, v.Photo.Image, v.Photo.Image.Bounds(), draw.Src, nil)
		}
		if !v.Covered.Empty() {
			draw.Draw(frame, v.Covered, &image.Uniform{color.RGBA{20, 20, 20, 255}}, image.Point{}, draw.Src)
		}
		if _, err := in.Write(frame.Pix); err != nil {
			t.Fatal(err)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("make clip: %v: %s", err, stderr.String())
	}
	return Clip{Path: path, W: w, H: h, FPS: fps, Frames: views}
}

// Pan is n views of p moving in a straight line from (x0, y0) to (x1, y1)
// at scale s.
func Pan(p Photo, n int, x0, y0, x1, y1, s float64) []View {
	views := make([]View, n)
	for i := range views {
		f := float64(i) / float64(max(n-1, 1))
		views[i] = View{Photo: p, X: x0 + (x1-x0)*f, Y: y0 + (y1-y0)*f, Scale: s}
	}
	return views
}
