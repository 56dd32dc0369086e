// Package videotest makes the video tests' clips: pans across a photo, its
// plate in view, with a tone as audio. The end-to-end clip (Make) is drawn
// from the repository's own sample photo (docs/samples/car.jpg), so it is
// there in every clone; the clips of the tracking measures (LoadPhoto) from
// labelled dash-cam photos of the shared sets.
package videotest

import (
	"context"
	"image"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"

	"carphoto/imageops/codec"
	"carphoto/internal/testenv/imgtest"
)

// The clip: Frames frames at FPS, W×H.
const (
	W, H   = 854, 480
	FPS    = 15
	Frames = 45
)

// sampleScale enlarges the 600×399 sample to 1290×857, room for the
// clip's pan at whole pixels; its 80×21 plate becomes about 172×45.
const sampleScale = 2.15

// Plate is the plate in the clip's photo (SamplePhoto): the sample's
// labelled plate, enlarged.
var Plate = image.Rect(
	int(float64(imgtest.SamplePlate.Min.X)*sampleScale), int(float64(imgtest.SamplePlate.Min.Y)*sampleScale),
	int(float64(imgtest.SamplePlate.Max.X)*sampleScale+0.999), int(float64(imgtest.SamplePlate.Max.Y)*sampleScale+0.999))

// SamplePhoto is docs/samples/car.jpg enlarged sampleScale times
// (Catmull-Rom), with its plate at Plate.
func SamplePhoto(t testing.TB) Photo {
	t.Helper()
	img, err := codec.Decode(context.Background(), imgtest.Sample(t, "car.jpg"), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	b := img.Image.Bounds()
	big := image.NewRGBA(image.Rect(0, 0, int(float64(b.Dx())*sampleScale), int(float64(b.Dy())*sampleScale)))
	draw.CatmullRom.Scale(big, big.Rect, img.Image, b, draw.Src, nil)
	return Photo{Image: big, Plate: Plate}
}

// Offset is where frame i's window starts in the photo: frame i shows the
// plate at Plate.Sub(Offset(i)).
func Offset(i int) image.Point {
	return image.Pt(100+300*i/(Frames-1), 120+100*i/(Frames-1))
}

// Make writes the clip as an MP4 (H.264 and AAC) in dir and returns its
// path: MakeClip of SamplePhoto at whole-pixel Offsets. It skips the test
// where ffmpeg is missing.
func Make(t testing.TB, dir string) string {
	t.Helper()
	p := SamplePhoto(t)
	views := make([]View, Frames)
	for i := range views {
		o := Offset(i)
		views[i] = View{Photo: p, X: float64(o.X), Y: float64(o.Y), Scale: 1}
	}
	return MakeClip(t, filepath.Join(dir, "clip.mp4"), W, H, FPS, views).Path
}
