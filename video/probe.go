// Package video hides licence plates in a video: ffprobe says what the
// video is, ffmpeg decodes it to raw frames through a pipe, the plate
// finder looks at key frames and the plates are tracked between them, and a
// second ffmpeg encodes the frames, with the original's audio, to an MP4.
package video

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"

	"carphoto"
)

// Info is what ffprobe says of a video, in displayed orientation.
type Info struct {
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

// Probe reads path's container and streams. A file that is not a video
// ffprobe can read is a *carphoto.Error (invalid_params).
func Probe(ctx context.Context, path string) (Info, error) {
	out, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-print_format", "json",
		"-show_format", "-show_streams", path).Output()
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
	var info Info
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
