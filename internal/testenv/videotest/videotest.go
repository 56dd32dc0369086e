// Package videotest makes the test clip of the video tests: a pan across a
// labelled dash-cam photo, its plate always in view, with a tone as audio.
package videotest

import (
	"image"
	"path/filepath"
	"testing"
)

// The clip: Frames frames at FPS, W×H.
const (
	W, H   = 854, 480
	FPS    = 15
	Frames = 45
)

// Plate is the labelled plate in the clip's photo (Photo0001).
var Plate = plates[Photo0001]

// Offset is where frame i's window starts in the photo: frame i shows the
// plate at Plate.Sub(Offset(i)).
func Offset(i int) image.Point {
	return image.Pt(100+300*i/(Frames-1), 120+100*i/(Frames-1))
}

// Make writes the clip as an MP4 (H.264 and AAC) in dir and returns its
// path: MakeClip of Photo0001 at whole-pixel Offsets. It skips the test
// where ffmpeg or the shared photos are missing (datasets.File).
func Make(t testing.TB, dir string) string {
	t.Helper()
	p := LoadPhoto(t, Photo0001)
	views := make([]View, Frames)
	for i := range views {
		o := Offset(i)
		views[i] = View{Photo: p, X: float64(o.X), Y: float64(o.Y), Scale: 1}
	}
	return MakeClip(t, filepath.Join(dir, "clip.mp4"), W, H, FPS, views).Path
}
