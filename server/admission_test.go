package server

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"carphoto/imageops"
	"carphoto/internal/testenv/redistest"
	"carphoto/jobs"
)

// The next call to arrive sees the queue as it is now: tasks that left it
// a moment ago (run, withdrawn unrun by a worker, deleted by their
// callers) no longer count as work ahead. A snapshot kept for even a
// quarter second refused a whole burst arriving just after another, with
// the workers about to idle (CI, 3 Dec: 32 of 32 refused, no 200).
func TestExpectedWaitSeesTasksLeave(t *testing.T) {
	r := redistest.New(t, 2)
	j := jobs.NewClient(r.Client, 0)
	t.Cleanup(func() { j.Close() })
	s := New(Config{RequestTimeout: 8 * time.Second}, zerolog.Nop(), r.Client, nil, j)
	s.pace.Observe(imageops.CarShadow, 2*time.Second)
	// Two workers' slots, as their heartbeats would say.
	s.workers.at, s.workers.concurrency = time.Now(), 2

	ctx := context.Background()
	active := "asynq:{" + jobs.Queue + "}:active"
	pending := "asynq:{" + jobs.Queue + "}:pending"
	if err := r.Client.RPush(ctx, active, "a", "b").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Client.RPush(ctx, pending, "c", "d", "e").Err(); err != nil {
		t.Fatal(err)
	}
	wait, ahead, ok := s.expectedWait(ctx)
	if !ok || ahead != 5 || wait != 4*time.Second {
		t.Fatalf("5 tasks on 2 slots at 2 s each: wait %v, %d ahead, ok %v; want 4s, 5, true", wait, ahead, ok)
	}
	// The tasks leave: the next arrival, at once, finds the workers free.
	if err := r.Client.Del(ctx, active, pending).Err(); err != nil {
		t.Fatal(err)
	}
	wait, ahead, ok = s.expectedWait(ctx)
	if !ok || ahead != 0 || wait != 0 {
		t.Fatalf("queue emptied: wait %v, %d ahead, ok %v; want 0s, 0, true", wait, ahead, ok)
	}
}
