package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto"
	"carphoto/imageops"
	"carphoto/internal/redisha"
)

// The worker side of a photo task: its beats (KeepAlive, WorkerAlive), its
// inputs (LoadInputs) and its result handed back (Deliver).

// KeepAlive refreshes the request's AliveKey with workerID every
// heartbeat (DefaultHeartbeat when zero) until the returned stop is
// called: the worker's heartbeat for one task. Failed refreshes are left
// to the next beat.
func KeepAlive(ctx context.Context, rdb redis.UniversalClient, requestID, workerID string, heartbeat time.Duration) (stop func()) {
	key, ttl := AliveKey(requestID), aliveTTL(heartbeat)
	return Beat(ctx, beatEvery(heartbeat), func(ctx context.Context) { rdb.Set(ctx, key, workerID, ttl) })
}

// WorkerAlive refreshes the process's WorkerKey every heartbeat
// (DefaultHeartbeat when zero) until the returned stop is called, which
// marks it WorkerStopped for a minute: a worker process's sign of life, by
// which the web side tells a worker that died from a heartbeat that
// lapsed. Run it for the whole life of the process.
func WorkerAlive(ctx context.Context, rdb redis.UniversalClient, workerID string, heartbeat time.Duration) (stop func()) {
	key, ttl := WorkerKey(workerID), aliveTTL(heartbeat)
	stopBeat := Beat(ctx, beatEvery(heartbeat), func(ctx context.Context) { rdb.Set(ctx, key, 1, ttl) })
	return func() {
		stopBeat()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		redisha.Retry(sctx, func(ctx context.Context) error { return rdb.Set(ctx, key, WorkerStopped, time.Minute).Err() })
	}
}

// Beat calls beat at once, then every period until the returned stop is
// called (or ctx is done): a sign of life a worker gives while it works.
// stop waits for a beat under way and may be called more than once.
func Beat(ctx context.Context, period time.Duration, beat func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	beat(ctx) // the first beat before returning
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			beat(ctx)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

// LoadInputs returns a task's images as imageops takes them (Limits left
// to the caller), riding through a Redis blip until ctx ends. A missing image means the request is gone (finished,
// timed out or its inputs expired): there is nobody to answer, and the
// caller should drop the task.
func LoadInputs(ctx context.Context, rdb redis.UniversalClient, p Payload) (imageops.Input, error) {
	var ph, design, backdrop, logo *redis.StringCmd
	err := redisha.Retry(ctx, func(ctx context.Context) error {
		pipe := rdb.Pipeline()
		ph, design, backdrop, logo = pipe.Get(ctx, PhotoKey(p.RequestID)), nil, nil, nil
		if p.Design {
			design = pipe.Get(ctx, DesignKey(p.RequestID))
		}
		if p.Backdrop {
			backdrop = pipe.Get(ctx, BackdropKey(p.RequestID))
		}
		if p.HasLogo && !p.Design && !p.Backdrop {
			logo = pipe.Get(ctx, LogoKey(p.RequestID))
		}
		_, err := pipe.Exec(ctx)
		if errors.Is(err, redis.Nil) {
			return nil
		}
		return err
	})
	if err != nil {
		return imageops.Input{}, fmt.Errorf("load inputs: %w", err)
	}
	var in imageops.Input
	if in.Photo, err = ph.Bytes(); err != nil {
		return imageops.Input{}, ErrGone
	}
	for _, second := range []struct {
		cmd *redis.StringCmd
		to  *[]byte
	}{{design, &in.Design}, {backdrop, &in.Backdrop}, {logo, logoTo(p, &in)}} {
		if second.cmd == nil {
			continue
		}
		if *second.to, err = second.cmd.Bytes(); err != nil {
			return imageops.Input{}, ErrGone
		}
	}
	return in, nil
}

// logoTo is where the second image a task queued by the release before
// goes (LogoKey): the backdrop where its params place the car on one, else
// the design.
func logoTo(p Payload, in *imageops.Input) *[]byte {
	if p.Params.Backdrop != nil {
		return &in.Backdrop
	}
	return &in.Design
}

// ErrGone means the request a task belongs to no longer waits for it.
var ErrGone = carphoto.Errorf(carphoto.EProcessingFailed, "the request is gone")

// Deliver hands a result to the waiting request, riding through a Redis
// blip until ctx ends. The list expires shortly after the deadline, so a
// result nobody reads does not stay in Redis.
func Deliver(ctx context.Context, rdb redis.UniversalClient, p Payload, r *Result) error {
	frame, err := r.encode()
	if err != nil {
		return err
	}
	key := ResultKey(p.RequestID)
	ttl := time.Until(p.Deadline) + 5*time.Second
	if ttl < time.Second {
		ttl = time.Second
	}
	return redisha.Retry(ctx, func(ctx context.Context) error {
		pipe := rdb.TxPipeline()
		pipe.RPush(ctx, key, frame)
		pipe.Expire(ctx, key, ttl)
		_, err := redisha.Exec(ctx, pipe)
		return err
	})
}
