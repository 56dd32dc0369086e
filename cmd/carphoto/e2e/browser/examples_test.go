package browser

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/videotest"
	"carphoto/video"
)

// TestExamplesRun runs each client in docs/examples against one embedded
// Service, side by side, where its interpreter is installed: every
// operation (blur-plates, plate-logo with a file and with a saved design,
// logo-overlay, car-shadow, car-cutout, car-shadow on a backdrop,
// blur-plates by imageUrl), the Assets library, and a video-blur job
// followed by its Retry-After to the MP4, its webhook's signature checked
// by the client. Each key's rate limit (the default, 60 a minute) is spent
// before its client starts, so the client meets a 429 at once and must
// wait out its Retry-After. Every photo and the video are charged once.
func TestExamplesRun(t *testing.T) {
	const secret = "example-webhook-secret-0123"
	env := map[string]string{"ALLOW_PRIVATE_URLS": "true", "WEBHOOK_SECRET": secret}
	withVideo := video.Available() == nil
	if withVideo {
		env["VIDEO_DIR"] = t.TempDir()
	} else {
		t.Logf("no ffmpeg (%v): the examples run without their video job", video.Available())
	}
	s := e2etest.StartService(t, env)
	samples, err := filepath.Abs(e2etest.RepoPath("docs", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(e2etest.RepoPath("docs", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	// The photo by URL comes from a server on loopback, which the service
	// reaches with ALLOW_PRIVATE_URLS.
	var fetched atomic.Int32
	files := http.FileServer(http.Dir(samples))
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(cdn.Close)
	// curl.sh cannot receive a webhook: this endpoint stands for the
	// integrator's, saving each delivery as it came for the script to check.
	inbox := t.TempDir()
	var delivered atomic.Int32
	var deliveries []string // their bodies, held to openapi.json at the end
	var mu sync.Mutex
	mailbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		deliveries = append(deliveries, string(body))
		mu.Unlock()
		name := filepath.Join(inbox, fmt.Sprintf("delivery-%d", delivered.Add(1)))
		os.WriteFile(name+".signature", []byte(r.Header.Get("Carphoto-Signature")), 0o644)
		os.WriteFile(name+".json", body, 0o644)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(mailbox.Close)
	clip := ""
	if withVideo {
		// One second of 640×360 with the plate in view: the job's whole
		// course (queued, processing, done, webhook) in a few seconds.
		p := videotest.SamplePhoto(t)
		clip = videotest.MakeClip(t, filepath.Join(t.TempDir(), "clip.mp4"), 640, 360, 15, videotest.Pan(p, 15, 395, 283, 435, 303, 1)).Path
	}

	type run struct {
		name           string
		cmd            []string
		id             string
		out            string
		stdout, stderr *e2etest.SyncBuffer
		took           time.Duration
		err            error
		done           chan struct{}
	}
	var runs []*run
	for _, c := range []struct {
		name  string
		cmd   []string
		check []string // a command that must succeed for the example to run
	}{
		{"curl", []string{"bash", "curl.sh"}, []string{"bash", "-c", "curl --version && openssl version"}},
		{"python", []string{"python3", "client.py"}, []string{"python3", "-c", "import requests"}},
		{"node", []string{"node", "client.mjs"}, []string{"node", "-e", "process.exit(+process.versions.node.split('.')[0] >= 18 ? 0 : 1)"}},
	} {
		r := &run{name: c.name, cmd: c.cmd, stdout: &e2etest.SyncBuffer{}, stderr: &e2etest.SyncBuffer{}, done: make(chan struct{})}
		runs = append(runs, r)
		if err := exec.Command(c.check[0], c.check[1:]...).Run(); err != nil {
			r.err = fmt.Errorf("%s is not available here (%s: %v): its example is not run", c.name, strings.Join(c.check, " "), err)
			close(r.done)
			continue
		}
		var key string
		r.id, key = s.Account(t, 30)
		r.out = t.TempDir()
		cmd := exec.Command(c.cmd[0], c.cmd[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CARPHOTO_URL="+s.URL, "CARPHOTO_KEY="+key, "OUT="+r.out,
			"PHOTO="+filepath.Join(samples, "car.jpg"), "LOGO="+filepath.Join(samples, "plate-design.png"),
			"BACKDROP="+filepath.Join(samples, "backdrop.jpg"), "IMAGE_URL="+cdn.URL+"/car.jpg", "WEBHOOK_SECRET="+secret)
		if withVideo {
			cmd.Env = append(cmd.Env, "VIDEO="+clip)
			if c.name == "curl" {
				cmd.Env = append(cmd.Env, "WEBHOOK_URL="+mailbox.URL+"/carphoto", "WEBHOOK_INBOX="+inbox)
			}
		}
		cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
		// The three run side by side on the one service; each key's limit
		// is kept spent until its client has met a 429.
		go func() {
			defer close(r.done)
			start := time.Now()
			stop := make(chan struct{})
			go keepRateLimitSpent(s.URL, key, r.stderr, stop)
			r.err = cmd.Start()
			if r.err == nil {
				timer := time.AfterFunc(4*time.Minute, func() { cmd.Process.Kill() })
				r.err = cmd.Wait()
				timer.Stop()
			}
			close(stop)
			r.took = time.Since(start)
		}()
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			<-r.done
			if r.out == "" {
				t.Skip(r.err)
			}
			stdout, stderr := r.stdout.String(), r.stderr.String()
			if r.err != nil {
				t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(r.cmd, " "), r.err, stdout, stderr)
			}
			t.Logf("%s ran in %v", strings.Join(r.cmd, " "), r.took.Round(100*time.Millisecond))
			photos := []string{"blurred.jpg", "logo-file.jpg", "logo-asset.jpg", "watermarked.jpg", "shadow.png", "cutout.png", "studio.png", "by-url.jpg"}
			for _, f := range photos {
				b, err := os.ReadFile(filepath.Join(r.out, f))
				if err != nil {
					t.Errorf("%s: %v", f, err)
					continue
				}
				if _, _, err := image.DecodeConfig(bytes.NewReader(b)); err != nil {
					t.Errorf("%s is not an image: %v", f, err)
				}
			}
			charged := int64(len(photos))
			if withVideo {
				charged++ // a second of video: one started 10 s
				got, err := video.Probe(context.Background(), filepath.Join(r.out, "blurred.mp4"))
				if err != nil || math.Abs(got.Duration-1) > 0.25 {
					t.Errorf("blurred.mp4: %+v, %v; want the 1 s clip", got, err)
				}
				checkPolls(t, stdout, stderr)
				if m := regexp.MustCompile(`webhook: signature verified: (\{.*\})`).FindStringSubmatch(stdout); m == nil ||
					!strings.Contains(m[1], `"status":"done"`) || !strings.Contains(m[1], `"resultUrl":"/v1/jobs/vid_`) {
					t.Errorf("the client did not verify a webhook saying the job is done:\n%s", stdout)
				}
			}
			if got := s.Credits(t, r.id); got != 30-charged {
				t.Errorf("balance %d, want %d: %d calls charged once each", got, 30-charged, charged)
			}
			if !strings.Contains(strings.ToLower(stderr), "retry") {
				t.Errorf("the client never retried its 429:\nstderr:\n%s", stderr)
			}
			for _, want := range []string{"blur-plates: plates", "asset saved:", "logo-overlay: plates -", "car-cutout: plates -", "asset deleted:", "car-shadow: plates -"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
	mu.Lock()
	e2etest.CheckWebhooks(t, deliveries...)
	mu.Unlock()
	if n := fetched.Load(); n == 0 && !t.Failed() {
		t.Error("no client's imageUrl reached the photo's server")
	}
}

// keepRateLimitSpent makes calls with key, a few a second, until the
// Service refuses them (429), then keeps it so until the client says it is
// retrying (on stderr) or stop: its first call then meets the limit,
// however long it takes to start.
func keepRateLimitSpent(url, key string, stderr *e2etest.SyncBuffer, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if strings.Contains(strings.ToLower(stderr.String()), "retry") {
			return
		}
		req, _ := http.NewRequest(http.MethodGet, url+"/v1/account", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusTooManyRequests {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// checkPolls reads an example's video poll loop from its output: it
// followed the job's Retry-After (2 to 30 s between looks) and saw the job
// done in a few polls.
func checkPolls(t *testing.T, stdout, stderr string) {
	t.Helper()
	m := regexp.MustCompile(`video-blur: job vid_\S+ done after (\d+) polls`).FindStringSubmatch(stdout)
	if m == nil {
		t.Errorf("no video job done:\n%s", stdout)
		return
	}
	polls, _ := strconv.Atoi(m[1])
	waits := regexp.MustCompile(`next look in (\d+) s`).FindAllStringSubmatch(stderr, -1)
	t.Logf("video-blur: done after %d polls, told to wait %v s between them", polls, waits)
	for _, w := range waits {
		if n, _ := strconv.Atoi(w[1]); n < 2 || n > 30 {
			t.Errorf("Retry-After %s s, want 2 to 30", w[1])
		}
	}
	if polls < 1 || polls > 10 {
		t.Errorf("%d polls for a 1 s clip, want 1 to 10", polls)
	}
}
