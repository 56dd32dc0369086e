package video

import (
	"context"
	"fmt"
	"image"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"carphoto/imageops"
	"carphoto/internal/testenv/videotest"
)

// The clips of issue 59, made from two labelled dash-cam photos at
// 640×360, 15 fps, two seconds each: the plate panned fast, zoomed,
// entering from the frame's edge, crossed by a bar for 5 frames, and a
// cut from one photo to another.
func clips(t *testing.T) map[string][]videotest.View {
	a := videotest.LoadPhoto(t, videotest.Photo0001) // plate 549–673 × 486–516
	b := videotest.LoadPhoto(t, videotest.Photo0002) // plate 538–695 × 550–592
	const n = 30
	zoom := make([]videotest.View, n)
	for i := range zoom {
		s := 0.6 + 0.4*float64(i)/(n-1)
		zoom[i] = videotest.View{Photo: a, X: 611 - 300/s, Y: 501 - 200/s, Scale: s}
	}
	bar := videotest.Pan(a, n, 300, 300, 340, 320, 1)
	for k := range 5 {
		v := &bar[12+k]
		p := v.PlateIn(640, 360)
		x := p.Min.X - 40 + (k+1)*(p.Dx()+40)/6
		v.Covered = image.Rect(x, 0, x+40, 360)
	}
	return map[string][]videotest.View{
		"pan":   videotest.Pan(a, n, 200, 250, 400, 350, 1),
		"zoom":  zoom,
		"enter": videotest.Pan(a, n, 549-680, 300, 549-380, 300, 1),
		"bar":   bar,
		"cut":   append(videotest.Pan(a, n/2, 300, 300, 320, 310, 1), videotest.Pan(b, n/2, 280, 380, 300, 390, 1)...),
	}
}

// Every frame of every clip comes out with no more than 10% of its plate's
// detail (where at least 20 pixels of the plate are in view, and beside
// the bar where it crosses): tracking
// between looks hides what a look at every frame would.
func TestBlurClips(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	for name, views := range clips(t) {
		t.Run(name, func(t *testing.T) {
			clip := videotest.MakeClip(t, filepath.Join(dir, name+".mp4"), 640, 360, 15, views)
			ctx := context.Background()
			info, err := Probe(ctx, clip.Path)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, name+"-out.mp4")
			if _, err := Blur(ctx, clip.Path, out, info, Options{Style: imageops.StyleBlur}); err != nil {
				t.Fatal(err)
			}
			before, after := lumaFrames(t, clip.Path, clip.W, clip.H), lumaFrames(t, out, clip.W, clip.H)
			if len(after) != len(before) || len(before) != len(views) {
				t.Fatalf("%d frames out of %d, %d made", len(after), len(before), len(views))
			}
			worst, at := 0.0, -1
			var ratios []byte // frame:percent
			for i, v := range views {
				plate := v.PlateIn(clip.W, clip.H).Inset(3)
				if plate.Dx() < 20 || plate.Dy() < 4 {
					continue
				}
				var parts []image.Rectangle // the plate where no bar covers it
				if c := v.Covered.Inset(-v.Photo.Plate.Dy() / 2); !c.Empty() && c.Overlaps(plate) {
					// Beside the bar by half a plate's height: the hide
					// blurs the bar's edge over the plate.
					parts = append(parts, image.Rect(plate.Min.X, plate.Min.Y, c.Min.X, plate.Max.Y),
						image.Rect(c.Max.X, plate.Min.Y, plate.Max.X, plate.Max.Y))
				} else {
					parts = []image.Rectangle{plate}
				}
				var d0, d1 float64
				for _, r := range parts {
					if r.Dx() >= 4 && r.Dy() >= 4 {
						d0 += detail(before[i], r) * float64(r.Dx()*r.Dy())
						d1 += detail(after[i], r) * float64(r.Dx()*r.Dy())
					}
				}
				if d0 == 0 {
					continue
				}
				ratios = fmt.Appendf(ratios, " %d:%.0f", i, 100*d1/d0)
				if ratio := d1 / d0; ratio > worst {
					worst, at = ratio, i
				}
				// The hide of a photo keeps 5-9% by this measure on these
				// clips, on the frames looked at as on those between
				// (codec noise, a plate scaled or cut by the frame's edge);
				// beside a dark bar, up to 13% (the blurred edge of the bar
				// counts as the plate's detail).
				limit := 0.10
				if !v.Covered.Empty() {
					limit = 0.15
				}
				if ratio := d1 / d0; ratio > limit {
					t.Errorf("frame %d: the plate keeps %.1f%% of its detail", i, 100*ratio)
				}
			}
			t.Logf("the most detail a frame's plate kept: %.1f%% (frame %d); each frame's, in %%:%s", 100*worst, at, ratios)
		})
	}
}

// A frame of odd width and height travels as YUV 4:2:0 (its chroma
// planes rounded up) and comes out padded to even, every frame kept.
func TestBlurOddSize(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	clip := filepath.Join(dir, "odd.mp4") // 4:4:4, which H.264 takes at an odd size
	if out, err := exec.Command("ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=101x75:rate=10:duration=1",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv444p", clip).CombinedOutput(); err != nil {
		t.Fatalf("make the clip: %v: %s", err, out)
	}
	ctx := context.Background()
	info, err := Probe(ctx, clip)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.mp4")
	if _, err := Blur(ctx, clip, out, info, Options{Style: imageops.StyleBlur}); err != nil {
		t.Fatal(err)
	}
	got, err := Probe(ctx, out)
	if err != nil || got.Width != 102 || got.Height != 76 || got.Frames != info.Frames {
		t.Fatalf("output %+v (%v), input %+v: want 102×76, every frame", got, err, info)
	}
	// The picture is the input's, not sheared by a wrong row length.
	before, after := lumaFrames(t, clip, 101, 75), lumaFrames(t, out, 102, 76)
	var diff float64
	for y := range 75 {
		for x := range 101 {
			diff += math.Abs(float64(before[5].GrayAt(x, y).Y) - float64(after[5].GrayAt(x, y).Y))
		}
	}
	if diff /= 101 * 75; diff > 6 {
		t.Errorf("frame 5 differs from the input by %.1f levels a pixel", diff)
	}
}
