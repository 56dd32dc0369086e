package main

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
	clip, data := testVideo(t)
	s3 := s3test.New(t)
	rs := redistest.New(t, redisDB)
	env := append([]string{rs.Env(), "PORT=0", "WORKER_CONCURRENCY=1"}, s3.Env("carphoto")...)
	webDir, workerDir := t.TempDir(), t.TempDir()
	webTmp, workerTmp := t.TempDir(), t.TempDir()
	web := startProcIn(t, webDir, "serve", append(env, "TMPDIR="+webTmp)...)
	url := waitFor(t, web.stdout, regexp.MustCompile(`carphoto listening on (http://\S+)`))
	worker := startProcIn(t, workerDir, "worker", append(env, "TMPDIR="+workerTmp)...)
	waitReady(t, url)
	cfg, _ := loadConfig(envOf(map[string]string{rs.EnvName(): rs.URL}))
	s := &service{url: url, rs: rs, b: newBilling(rs, cfg)}
	id, key := s.account(t, 5)

	status, _, body := post(t, url+"/v1/video-blur", key, file("video", data))
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", status, body)
	}
	var sub struct{ ID string }
	json.Unmarshal(body, &sub)
	var j jobStatus
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		_, j = getJob(t, url, key, sub.ID)
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
	if !strings.Contains(worker.stderr.String(), "video job started") {
		t.Error("the worker process did not log the job: who ran it?")
	}
	status, h, mp4 := do(t, http.MethodGet, url+j.Result, key, "", nil)
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
	if got := s.credits(t, id); got != 4 {
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
