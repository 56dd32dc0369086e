package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/rs/zerolog"

	"carphoto/internal/redistest"
	"carphoto/jobs"
)

// A task recovered after its request's deadline (a crashed worker's lease
// ran out, say) is dropped without processing and without an answer.
func TestLateTaskIsDropped(t *testing.T) {
	rs := redistest.New(t, 6)
	w := New(Config{Concurrency: 1, MaxPixels: 1e6}, zerolog.Nop(), rs.Client)
	ctx := context.Background()
	p := jobs.Payload{RequestID: "late", Op: jobs.OpBlurPlates, EnqueuedAt: time.Now().Add(-time.Minute), Deadline: time.Now().Add(-time.Second)}
	rs.Client.Set(ctx, jobs.PhotoKey(p.RequestID), "not even a photo", time.Minute)
	body, _ := json.Marshal(p)
	if err := w.handle(ctx, asynq.NewTask(jobs.TaskType(p.Op), body)); err != nil {
		t.Fatalf("handle: %v", err)
	}
	if n, _ := rs.Client.Exists(ctx, jobs.ResultKey(p.RequestID)).Result(); n != 0 {
		t.Errorf("a result was delivered for a task past its deadline")
	}
}

// A task whose request is gone (inputs deleted) is dropped unprocessed.
func TestTaskOfGoneRequestIsDropped(t *testing.T) {
	rs := redistest.New(t, 6)
	w := New(Config{Concurrency: 1, MaxPixels: 1e6}, zerolog.Nop(), rs.Client)
	ctx := context.Background()
	p := jobs.Payload{RequestID: "gone", Op: jobs.OpBlurPlates, EnqueuedAt: time.Now(), Deadline: time.Now().Add(time.Minute)}
	body, _ := json.Marshal(p)
	if err := w.handle(ctx, asynq.NewTask(jobs.TaskType(p.Op), body)); err != nil {
		t.Fatalf("handle: %v", err)
	}
	if n, _ := rs.Client.Exists(ctx, jobs.ResultKey(p.RequestID)).Result(); n != 0 {
		t.Errorf("a result was delivered for a request that is gone")
	}
}

// A photo that is not an image comes back as invalid_params, not a crash
// and not a failed task.
func TestBadPhotoIsAClientError(t *testing.T) {
	rs := redistest.New(t, 6)
	w := New(Config{Concurrency: 1, MaxPixels: 1e6}, zerolog.Nop(), rs.Client)
	ctx := context.Background()
	p := jobs.Payload{RequestID: "bad", Op: jobs.OpCarShadow, EnqueuedAt: time.Now(), Deadline: time.Now().Add(time.Minute)}
	rs.Client.Set(ctx, jobs.PhotoKey(p.RequestID), "\xff\xd8\xff\xe0 truncated", time.Minute)
	body, _ := json.Marshal(p)
	if err := w.handle(ctx, asynq.NewTask(jobs.TaskType(p.Op), body)); err != nil {
		t.Fatalf("handle: %v", err)
	}
	frame, err := rs.Client.LPop(ctx, jobs.ResultKey(p.RequestID)).Bytes()
	if err != nil {
		t.Fatalf("no result delivered: %v", err)
	}
	res, err := jobs.DecodeResult(frame)
	if err != nil {
		t.Fatal(err)
	}
	if res.Code != "invalid_params" || res.Message == "" {
		t.Errorf("result code %q message %q, want invalid_params with a message", res.Code, res.Message)
	}
}
