package video

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"carphoto"
)

// Info is what ffprobe says of a video, in displayed orientation.
type Info struct {
	// Format is the ffmpeg demuxer the file's own bytes name ("mov" for
	// MP4 and MOV, "matroska" for MKV and WebM): ffprobe and ffmpeg are
	// told it, never left to guess it from the content.
	Format        string
	Width, Height int     // after the rotation is applied
	Rate          string  // frame rate as ffprobe gives it ("30000/1001")
	FPS           float64 // the same as a number
	Duration      float64 // seconds
	Frames        int     // frames the decoder will give at FPS (an estimate)
	Audio         bool
	Rotation      int // degrees the player turns the stored frames
}

// Available reports whether ffmpeg and ffprobe are installed.
func Available() error {
	for _, tool := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not installed (apt-get install ffmpeg): video jobs cannot run here", tool)
		}
	}
	return nil
}

// Sniff names the ffmpeg demuxer of the container r's first bytes are:
// "mov" for MP4 and MOV (an ISO box: ftyp, moov, mdat, free, skip or wide
// at offset 4), "matroska" for MKV and WebM (the EBML magic). Anything else
// (an HLS playlist, a concat list, an SDP file, a raw stream) is an
// invalid_params error: such inputs name other files or URLs to read, and
// the service reads only the bytes it was sent.
func Sniff(r io.Reader) (string, error) {
	head := make([]byte, 12)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	switch {
	case len(head) >= 4 && bytes.Equal(head[:4], []byte{0x1A, 0x45, 0xDF, 0xA3}):
		return "matroska", nil
	case len(head) >= 8:
		switch string(head[4:8]) {
		case "ftyp", "moov", "mdat", "free", "skip", "wide":
			return "mov", nil
		}
	}
	return "", carphoto.Errorf(carphoto.EInvalidParams, "video must be an MP4, MOV, WebM or MKV file")
}

// input is the ffmpeg and ffprobe arguments that open path as format and
// as nothing else: the demuxer named, and only the file protocol allowed,
// so that nothing in the file can make them read another file or a URL.
func input(format, path string) []string {
	return []string{"-protocol_whitelist", "file", "-f", format, "-i", "file:" + path}
}

// Probe reads path's container and streams, opened as the container its
// bytes are (Sniff). A file that is not a video ffprobe can read is a
// *carphoto.Error (invalid_params).
func Probe(ctx context.Context, path string) (Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, fmt.Errorf("open video: %w", err)
	}
	format, err := Sniff(f)
	f.Close()
	if err != nil {
		return Info{}, err
	}
	args := append([]string{"-v", "error", "-print_format", "json", "-show_format", "-show_streams"}, input(format, path)...)
	out, err := exec.CommandContext(ctx, "ffprobe", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return Info{}, carphoto.Errorf(carphoto.EInvalidParams, "video is not a readable video file")
		}
		return Info{}, fmt.Errorf("ffprobe: %w", err)
	}
	var p struct {
		Streams []struct {
			CodecType    string `json:"codec_type"`
			Width        int    `json:"width"`
			Height       int    `json:"height"`
			RFrameRate   string `json:"r_frame_rate"`
			AvgFrameRate string `json:"avg_frame_rate"`
			Duration     string `json:"duration"`
			Tags         struct {
				Rotate string `json:"rotate"`
			} `json:"tags"`
			SideData []struct {
				Rotation float64 `json:"rotation"`
			} `json:"side_data_list"`
		} `json:"streams"`
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		return Info{}, fmt.Errorf("ffprobe output: %w", err)
	}
	info := Info{Format: format}
	found := false
	for _, s := range p.Streams {
		switch s.CodecType {
		case "audio":
			info.Audio = true
		case "video":
			if found || s.Width <= 0 || s.Height <= 0 {
				continue
			}
			found = true
			info.Width, info.Height = s.Width, s.Height
			info.Rate = s.AvgFrameRate
			info.FPS = rate(s.AvgFrameRate)
			if info.FPS <= 0 || info.FPS > 240 {
				info.Rate, info.FPS = s.RFrameRate, rate(s.RFrameRate)
			}
			if r, err := strconv.Atoi(s.Tags.Rotate); err == nil {
				info.Rotation = r
			}
			for _, sd := range s.SideData {
				if sd.Rotation != 0 {
					info.Rotation = int(-sd.Rotation)
				}
			}
			info.Duration, _ = strconv.ParseFloat(s.Duration, 64)
		}
	}
	if !found {
		return Info{}, carphoto.Errorf(carphoto.EInvalidParams, "video has no video stream")
	}
	if !(info.FPS > 0 && info.FPS <= 240) {
		return Info{}, carphoto.Errorf(carphoto.EInvalidParams, "video has no usable frame rate (%q)", info.Rate)
	}
	if d, err := strconv.ParseFloat(p.Format.Duration, 64); err == nil && d > info.Duration {
		info.Duration = d
	}
	if !(info.Duration > 0) {
		return Info{}, carphoto.Errorf(carphoto.EInvalidParams, "video has no duration")
	}
	info.Rotation = ((info.Rotation % 360) + 360) % 360
	if info.Rotation == 90 || info.Rotation == 270 {
		info.Width, info.Height = info.Height, info.Width
	}
	info.Frames = int(math.Ceil(info.Duration * info.FPS))
	return info, nil
}

// Limits bound the work a video can ask for, checked from the probe
// before any frame is decoded.
type Limits struct {
	MaxSeconds     float64 // duration
	MaxFramePixels int     // width × height of a frame
	MaxPixels      int64   // width × height × frames, all frames together
}

// MaxSide bounds each side of a frame, whatever its pixel count.
const MaxSide = 8192

// Check refuses a video past one of l's bounds (zero leaves a bound off)
// with an invalid_params error naming it.
func (l Limits) Check(info Info) error {
	switch {
	case l.MaxSeconds > 0 && info.Duration > l.MaxSeconds:
		return carphoto.Errorf(carphoto.EInvalidParams, "video is %s long; the limit is %s", Seconds(info.Duration), Seconds(l.MaxSeconds))
	case info.Width > MaxSide || info.Height > MaxSide:
		return carphoto.Errorf(carphoto.EInvalidParams, "video frames are %d×%d; each side may be at most %d pixels", info.Width, info.Height, MaxSide)
	case l.MaxFramePixels > 0 && info.Width*info.Height > l.MaxFramePixels:
		return carphoto.Errorf(carphoto.EInvalidParams, "video frames are %d×%d = %.1f MP; the limit is %.1f MP a frame",
			info.Width, info.Height, float64(info.Width*info.Height)/1e6, float64(l.MaxFramePixels)/1e6)
	case l.MaxPixels > 0 && int64(info.Width)*int64(info.Height)*int64(info.Frames) > l.MaxPixels:
		return carphoto.Errorf(carphoto.EInvalidParams,
			"video is %d frames of %d×%d, %.1f gigapixels in all; the limit is %.1f gigapixels (a shorter clip, a lower resolution or frame rate fits)",
			info.Frames, info.Width, info.Height, float64(info.Width)*float64(info.Height)*float64(info.Frames)/1e9, float64(l.MaxPixels)/1e9)
	}
	return nil
}

// rate reads "num/den" or a plain number.
func rate(s string) float64 {
	num, den, ok := strings.Cut(s, "/")
	n, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0
	}
	if !ok {
		return n
	}
	d, err := strconv.ParseFloat(den, 64)
	if err != nil || d == 0 {
		return 0
	}
	return n / d
}
