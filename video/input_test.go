package video

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"carphoto"
)

// testClip writes a size-pixel test pattern of the given seconds at 10 fps
// to dir/name, in the container its extension names.
func testClip(t *testing.T, dir, name, size string, seconds float64) string {
	t.Helper()
	path := filepath.Join(dir, name)
	out, err := exec.Command("ffmpeg", "-v", "error", "-y", "-f", "lavfi",
		"-i", "testsrc=size="+size+":rate=10:duration="+strconv.FormatFloat(seconds, 'f', -1, 64),
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path).CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v: %s", name, err, out)
	}
	return path
}

// A video is opened as the container its bytes are and as nothing else:
// an HLS playlist or a concat list naming another job's file is refused
// as invalid_params before ffprobe reads it, while MP4, MOV and MKV open.
func TestProbeOpensOnlyTheBytesSent(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	victim := testClip(t, dir, "victim.mp4", "64x48", 2)
	for _, name := range []string{"clip.mp4", "clip.mov", "clip.mkv"} {
		info, err := Probe(context.Background(), testClip(t, dir, name, "64x48", 1))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := map[string]string{".mp4": "mov", ".mov": "mov", ".mkv": "matroska"}[filepath.Ext(name)]
		if info.Format != want || info.Width != 64 || info.Height != 48 {
			t.Errorf("%s: format %q %d×%d, want %q 64×48", name, info.Format, info.Width, info.Height, want)
		}
	}
	for name, body := range map[string]string{
		"HLS playlist": "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:0.1,\nfile:" + victim + "\n#EXT-X-ENDLIST\n",
		"concat list":  "ffconcat version 1.0\nfile " + victim + "\n",
		"SDP":          "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\nm=video 5004 RTP/AVP 96\n",
	} {
		path := filepath.Join(dir, "upload.in")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Probe(context.Background(), path)
		var ce *carphoto.Error
		if !errors.As(err, &ce) || ce.Code != carphoto.EInvalidParams || !strings.Contains(ce.Message, "MP4, MOV, WebM or MKV") {
			t.Errorf("%s: %v, want invalid_params naming the containers taken", name, err)
		}
	}
}

// The frames processed stop at the duration the job was held for, even
// when the file holds more.
func TestBlurStopsAtTheDurationHeld(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	in := testClip(t, dir, "long.mp4", "64x48", 3)
	info, err := Probe(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	info.Duration, info.Frames = 0.5, 5 // as held
	out := filepath.Join(dir, "out.mp4")
	if _, err := Blur(context.Background(), in, out, info, Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := Probe(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if got.Duration > 0.65 {
		t.Errorf("output is %s long, want the 0.5 s held", Seconds(got.Duration))
	}
}

func TestLimitsCheck(t *testing.T) {
	lim := Limits{MaxSeconds: 180, MaxFramePixels: 4096 * 2160, MaxPixels: 48e9}
	for _, tc := range []struct {
		info Info
		want string
	}{
		{Info{Width: 1920, Height: 1080, Duration: 60, Frames: 1800}, ""},
		{Info{Width: 1920, Height: 1080, Duration: 200, Frames: 6000}, "the limit is 180.0 s"},
		{Info{Width: 8192, Height: 8192, Duration: 2, Frames: 60}, "the limit is 8.8 MP a frame"},
		{Info{Width: 60000, Height: 2, Duration: 2, Frames: 60}, "each side may be at most 8192"},
		{Info{Width: 4096, Height: 2160, Duration: 180, Frames: 180 * 60}, "the limit is 48.0 gigapixels"},
	} {
		err := lim.Check(tc.info)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%+v: %v, want it taken", tc.info, err)
			}
			continue
		}
		if carphoto.ErrorCode(err) != carphoto.EInvalidParams || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want invalid_params saying %q", tc.info, err, tc.want)
		}
	}
}
