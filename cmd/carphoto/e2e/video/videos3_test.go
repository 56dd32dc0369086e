package video

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"carphoto/internal/service"
	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/redistest"
	"carphoto/internal/testenv/s3test"
	"carphoto/video"
)

// A video job across machines with no disk in common: the web process and
// the worker each run in a directory of their own with a temporary
// directory of their own, and meet only in Redis and an S3 bucket
// (OBJECT_STORE=s3://...). The job completes, the result downloads through
// the web process, the credits are exact, and neither leaves copies behind.
func TestVideoBlurOnS3(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	clip, data := e2etest.VideoClip(t)
	s3 := s3test.New(t)
	rs := redistest.New(t, redisDB)
	env := append([]string{rs.Env(), "PORT=0", "WORKER_CONCURRENCY=1"}, s3.Env("carphoto")...)
	webDir, workerDir := t.TempDir(), t.TempDir()
	webTmp, workerTmp := t.TempDir(), t.TempDir()
	web := e2etest.StartProcIn(t, webDir, "serve", append(env, "TMPDIR="+webTmp)...)
	url := e2etest.WaitFor(t, web.Stdout, regexp.MustCompile(`carphoto listening on (http://\S+)`))
	worker := e2etest.StartProcIn(t, workerDir, "worker", append(env, "TMPDIR="+workerTmp)...)
	e2etest.WaitReady(t, url)
	cfg, _ := service.LoadConfig(e2etest.EnvOf(map[string]string{rs.EnvName(): rs.URL}))
	s := &e2etest.Service{URL: url, RS: rs, Billing: e2etest.NewBilling(rs, cfg)}
	id, key := s.Account(t, 5)

	status, _, body := e2etest.Post(t, url+"/v1/video-blur", key, e2etest.File("video", data))
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", status, body)
	}
	var sub struct{ ID string }
	json.Unmarshal(body, &sub)
	var j e2etest.JobStatus
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		_, j = e2etest.GetJob(t, url, key, sub.ID)
		if j.Status == "done" || j.Status == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s after 90 s", j.Status)
		}
	}
	if j.Status != "done" || j.Progress.FramesDone != j.Progress.FramesTotal {
		t.Fatalf("job ended %+v, want done", j)
	}
	if !strings.Contains(worker.Stderr.String(), "video job started") {
		t.Error("the worker process did not log the job: who ran it?")
	}
	status, h, mp4 := e2etest.Do(t, http.MethodGet, url+j.Result, key, "", nil)
	if status != 200 || h.Get("Content-Type") != "video/mp4" || len(mp4) == 0 {
		t.Fatalf("result: %d %q, %d bytes", status, h.Get("Content-Type"), len(mp4))
	}
	out := filepath.Join(t.TempDir(), "out.mp4")
	os.WriteFile(out, mp4, 0o600)
	in, _ := video.Probe(context.Background(), clip)
	got, err := video.Probe(context.Background(), out)
	if err != nil || got.Width != in.Width || got.Height != in.Height || math.Abs(got.Duration-in.Duration) > 0.25 || !got.Audio {
		t.Errorf("result %+v (%v), input %+v: size, duration or audio not kept", got, err, in)
	}
	if got := s.Credits(t, id); got != 4 {
		t.Errorf("balance %d, want 4: 1 credit charged once", got)
	}

	ctx := context.Background()
	if _, err := s3.Client.StatObject(ctx, s3.Bucket, "carphoto/videos/"+video.ResultKey(sub.ID), minio.StatObjectOptions{}); err != nil {
		t.Errorf("the result is not in the bucket: %v", err)
	}
	if _, err := s3.Client.StatObject(ctx, s3.Bucket, "carphoto/videos/"+video.InputKey(sub.ID), minio.StatObjectOptions{}); err == nil {
		t.Error("the job's input is still in the bucket after the job ended")
	}
	// The worker removes its copies just after it marks the job done.
	for _, dir := range []string{webDir, workerDir, webTmp, workerTmp} {
		var entries []os.DirEntry
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if entries, _ = os.ReadDir(dir); len(entries) == 0 || time.Now().After(deadline) {
				break
			}
		}
		for _, e := range entries {
			t.Errorf("%s left in %s: the local copies go when their job is done with them", e.Name(), dir)
		}
	}
}
