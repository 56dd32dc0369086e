package video

import (
	"context"
	"fmt"
	"image"
	"os/exec"
	"strconv"
	"strings"

	"carphoto/imageops"
)

// Options say how a video's plates are hidden.
type Options struct {
	Style    imageops.Style
	Progress func(done, total int) // called every few frames; may be nil
}

// pipeSize is the most buffer asked of the kernel for each ffmpeg pipe:
// its default limit for an unprivileged process (a 1080p frame is 3 MB).
const pipeSize = 1 << 20

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
	decArgs = append(decArgs, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-fps_mode", "cfr", "-r", info.Rate,
		"-frames:v", strconv.Itoa(info.Frames), "-")
	dec := exec.CommandContext(ctx, "ffmpeg", decArgs...)
	frames, err := dec.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var decErr strings.Builder
	dec.Stderr = &decErr
	args := []string{"-v", "error", "-nostdin", "-y",
		"-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", fmt.Sprintf("%dx%d", info.Width, info.Height), "-r", info.Rate, "-i", "pipe:0",
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
	// The frames cross the pipes in reads and writes of up to a frame's
	// size (pipeSize at most), straight into and out of the frames' own
	// buffers: no buffered reader copies them on the way.
	frameSize := len(newFrame(info.Width, info.Height).buf)
	widenPipe(frames, min(frameSize, pipeSize))
	widenPipe(sink, min(frameSize, pipeSize))
	hidden, runErr := run(ctx, frames, sink, info, opt)
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

// Seconds formats a duration for messages.
func Seconds(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) + " s" }
