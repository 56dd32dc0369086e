package video

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"carphoto/imageops"
)

// keyEvery is how often, in frames, the plate finder looks: every third
// frame, the frames between get their plates from the two key frames
// around them (a twelfth of a second apart at 30 fps, in which a plate
// moves a few pixels).
const keyEvery = 3

// holdKeys is how many key frames a plate that is no longer found stays
// hidden where it was last seen: a plate the finder misses on one key
// frame (motion blur, a reflection) is not shown for it.
const holdKeys = 3

// Options say how a video's plates are hidden.
type Options struct {
	Style    imageops.Style
	Progress func(done, total int) // called every few frames; may be nil
}

// Blur hides every plate in every frame of the video at in and writes it
// to out as an MP4 (H.264, yuv420p, the original's audio as AAC, the
// frame rate and displayed size kept; an odd width or height is padded to
// even, which H.264 needs). It returns how many plate sightings it hid.
func Blur(ctx context.Context, in, out string, info Info, opt Options) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Both ffmpegs open the input as info.Format and stop at
	// info.Duration, the length the job was held and charged for, whatever
	// the streams hold past it.
	limit := strconv.FormatFloat(info.Duration, 'f', 3, 64)
	decArgs := append([]string{"-v", "error", "-nostdin", "-t", limit}, input(info.Format, in)...)
	decArgs = append(decArgs, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "rgba", "-fps_mode", "cfr", "-r", info.Rate,
		"-frames:v", strconv.Itoa(info.Frames), "-")
	dec := exec.CommandContext(ctx, "ffmpeg", decArgs...)
	frames, err := dec.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var decErr strings.Builder
	dec.Stderr = &decErr
	args := []string{"-v", "error", "-nostdin", "-y",
		"-f", "rawvideo", "-pix_fmt", "rgba", "-s", fmt.Sprintf("%dx%d", info.Width, info.Height), "-r", info.Rate, "-i", "pipe:0",
		"-t", limit}
	args = append(args, input(info.Format, in)...)
	args = append(args, "-map", "0:v", "-map", "1:a?", "-t", limit,
		"-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
		"-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p",
		"-c:a", "aac", "-b:a", "160k", "-movflags", "+faststart", out)
	enc := exec.CommandContext(ctx, "ffmpeg", args...)
	sink, err := enc.StdinPipe()
	if err != nil {
		return 0, err
	}
	var encErr strings.Builder
	enc.Stderr = &encErr
	if err := dec.Start(); err != nil {
		return 0, fmt.Errorf("start ffmpeg: %w", err)
	}
	if err := enc.Start(); err != nil {
		dec.Process.Kill()
		dec.Wait()
		return 0, fmt.Errorf("start ffmpeg: %w", err)
	}
	hidden, runErr := run(ctx, bufio.NewReaderSize(frames, 1<<20), sink, info, opt)
	sink.Close()
	if runErr != nil {
		cancel()
	}
	decWait, encWait := dec.Wait(), enc.Wait()
	switch {
	case ctx.Err() != nil && runErr == nil:
		return 0, ctx.Err()
	case runErr != nil:
		return 0, runErr
	case decWait != nil:
		return 0, fmt.Errorf("decode: %v: %s", decWait, strings.TrimSpace(decErr.String()))
	case encWait != nil:
		return 0, fmt.Errorf("encode: %v: %s", encWait, strings.TrimSpace(encErr.String()))
	}
	return hidden, nil
}

// run reads raw RGBA frames from r, hides their plates and writes them to
// w. Frames wait in a buffer until the next key frame has been looked at,
// so that the frames between two key frames can take their plates from
// both.
func run(ctx context.Context, r io.Reader, w io.Writer, info Info, opt Options) (int, error) {
	size := info.Width * info.Height * 4
	var (
		pending []*image.RGBA // frames after the last key frame, not yet written
		free    []*image.RGBA // frames written, to be read into again
		tr      tracker
		done    int
		hidden  int
	)
	flush := func(quads [][]imageops.Quad) error {
		for i, f := range pending {
			if err := ctx.Err(); err != nil {
				return err
			}
			out := f
			if len(quads[i]) > 0 {
				var err error
				if out, err = imageops.HideFrame(ctx, f, quads[i], opt.Style); err != nil {
					return err
				}
				hidden += len(quads[i])
			}
			if _, err := w.Write(out.Pix); err != nil {
				return fmt.Errorf("encode: %w", err)
			}
			free = append(free, f)
			done++
			if opt.Progress != nil && done%15 == 0 {
				opt.Progress(done, max(done, info.Frames))
			}
		}
		pending = pending[:0]
		return nil
	}
	for n := 0; ; n++ {
		var f *image.RGBA
		if k := len(free); k > 0 {
			f, free = free[k-1], free[:k-1]
		} else {
			f = image.NewRGBA(image.Rect(0, 0, info.Width, info.Height))
		}
		if _, err := io.ReadFull(r, f.Pix[:size]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			return 0, fmt.Errorf("decode: %w", err)
		}
		pending = append(pending, f)
		if n%keyEvery != 0 {
			continue
		}
		found, err := imageops.FindPlates(ctx, f)
		if err != nil {
			return 0, err
		}
		if err := flush(tr.key(found, len(pending))); err != nil {
			return 0, err
		}
	}
	// The frames after the last key frame keep its plates.
	if err := flush(tr.tail(len(pending))); err != nil {
		return 0, err
	}
	if opt.Progress != nil {
		opt.Progress(done, done)
	}
	return hidden, nil
}

// tracker follows plates from key frame to key frame.
type tracker struct {
	tracks []track
}

type track struct {
	quad   imageops.Quad // where it was last found (or held)
	missed int           // key frames since it was last found
}

// key takes the plates found on a key frame that comes n frames after the
// previous one (the key frame is the last of the n) and returns the quads
// to hide in each of the n frames: a plate found on both key frames moves
// linearly between them; a plate found only now is hidden in the frames
// before it too (it was probably there, missed); a plate not found now is
// kept where it was for holdKeys key frames.
func (t *tracker) key(found []imageops.Quad, n int) [][]imageops.Quad {
	out := make([][]imageops.Quad, n)
	matched := make([]bool, len(t.tracks))
	var next []track
	for _, q := range found {
		best, bestScore := -1, 0.0
		for i, tr := range t.tracks {
			if matched[i] {
				continue
			}
			if s := overlap(tr.quad, q); s > bestScore {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			for i := range n {
				out[i] = append(out[i], q)
			}
		} else {
			matched[best] = true
			from := t.tracks[best].quad
			for i := range n {
				out[i] = append(out[i], lerp(from, q, float64(i+1)/float64(n)))
			}
		}
		next = append(next, track{quad: q})
	}
	for i, tr := range t.tracks {
		if matched[i] || tr.missed >= holdKeys {
			continue
		}
		for k := range n {
			out[k] = append(out[k], tr.quad)
		}
		next = append(next, track{quad: tr.quad, missed: tr.missed + 1})
	}
	t.tracks = next
	return out
}

// tail is the quads of the n frames after the last key frame: its plates.
func (t *tracker) tail(n int) [][]imageops.Quad {
	out := make([][]imageops.Quad, n)
	for i := range n {
		for _, tr := range t.tracks {
			out[i] = append(out[i], tr.quad)
		}
	}
	return out
}

// overlap scores how likely two quads are the same plate a few frames
// apart: the IoU of their bounds, grown by half a plate's height so that a
// small plate that moved its own width still matches. Zero when apart.
func overlap(a, b imageops.Quad) float64 {
	ra, rb := a.Grow(0.5*a.Height()).Bounds(), b.Grow(0.5*b.Height()).Bounds()
	in := ra.Intersect(rb)
	if in.Empty() {
		return 0
	}
	area := func(r image.Rectangle) float64 { return float64(r.Dx() * r.Dy()) }
	return area(in) / (area(ra) + area(rb) - area(in))
}

// lerp is the quad a share f of the way from a to b.
func lerp(a, b imageops.Quad, f float64) imageops.Quad {
	var q imageops.Quad
	for i := range q {
		q[i] = imageops.Point{X: a[i].X + (b[i].X-a[i].X)*f, Y: a[i].Y + (b[i].Y-a[i].Y)*f}
	}
	return q
}

// Seconds formats a duration for messages.
func Seconds(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) + " s" }
