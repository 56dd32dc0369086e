package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/rs/zerolog"

	"carphoto/imageops"
	"carphoto/internal/testenv/redistest"
	"carphoto/jobs"
)

// runTask hands one task to a worker, with photo stored under the request's
// key unless it is nil, and returns the result delivered (nil for none).
func runTask(t *testing.T, p jobs.Payload, photo []byte) *jobs.Result {
	t.Helper()
	rs := redistest.New(t, 6)
	w := New(Config{Concurrency: 1, MaxPixels: 1e6}, zerolog.Nop(), rs.Client)
	ctx := context.Background()
	if photo != nil {
		rs.Client.Set(ctx, jobs.PhotoKey(p.RequestID), photo, time.Minute)
	}
	body, _ := json.Marshal(p)
	if err := w.handle(ctx, asynq.NewTask(jobs.TaskType(p.Op), body)); err != nil {
		t.Fatalf("handle: %v", err)
	}
	frame, err := rs.Client.LPop(ctx, jobs.ResultKey(p.RequestID)).Bytes()
	if err != nil {
		return nil
	}
	res, err := jobs.DecodeResult(frame)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A task recovered after its request's deadline (a crashed worker's lease
// ran out, say) is dropped without processing and without an answer.
func TestLateTaskIsDropped(t *testing.T) {
	p := jobs.Payload{RequestID: "late", Op: imageops.BlurPlates, EnqueuedAt: time.Now().Add(-time.Minute), Deadline: time.Now().Add(-time.Second)}
	if res := runTask(t, p, []byte("not even a photo")); res != nil {
		t.Errorf("a result was delivered for a task past its deadline: %+v", res)
	}
}

// A task whose request is gone (inputs deleted) is dropped unprocessed.
func TestTaskOfGoneRequestIsDropped(t *testing.T) {
	p := jobs.Payload{RequestID: "gone", Op: imageops.BlurPlates, EnqueuedAt: time.Now(), Deadline: time.Now().Add(time.Minute)}
	if res := runTask(t, p, nil); res != nil {
		t.Errorf("a result was delivered for a request that is gone: %+v", res)
	}
}

// A photo that is not an image comes back as invalid_params, not a crash
// and not a failed task.
func TestBadPhotoIsAClientError(t *testing.T) {
	p := jobs.Payload{RequestID: "bad", Op: imageops.CarShadow, EnqueuedAt: time.Now(), Deadline: time.Now().Add(time.Minute)}
	res := runTask(t, p, []byte("\xff\xd8\xff\xe0 truncated"))
	if res == nil {
		t.Fatal("no result delivered")
	}
	if res.Code != "invalid_params" || res.Message == "" {
		t.Errorf("result code %q message %q, want invalid_params with a message", res.Code, res.Message)
	}
}
