package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"carphoto/imageops"
	"carphoto/internal/redisha"
)

// Request is one photo to process, as the web process hands it over.
type Request struct {
	ID        string
	AccountID string
	Photo     []byte
	Design    []byte // plate-logo's design, logo-overlay's logo; nil otherwise
	Backdrop  []byte // car-shadow's and car-cutout's backdrop (Params.Backdrop); nil otherwise
	// Asset is, instead of Design or Backdrop, the second image as a saved
	// asset: its key in the asset store, where the worker reads it (never
	// through Redis): the backdrop where Params.Backdrop places the car on
	// one, else the design.
	Asset string
	// DesignAsset is, instead of Design, the design of a call that also
	// has a backdrop (car-shadow or car-cutout with plates=logo) as a
	// saved asset.
	DesignAsset string
	Params      imageops.Params
	Deadline    time.Time
	// StartBy is the latest a worker may take the task up and still
	// finish it by Deadline at the workers' pace; zero means Deadline. A
	// task still queued then is withdrawn (ErrWithdrawn). Do asks it again
	// at every look, as the pace it stands for is learnt; the worker
	// holds a task to its value at the enqueue.
	StartBy func() time.Time
}

// Client enqueues requests and waits for their results.
type Client struct {
	rdb   redis.UniversalClient
	aq    *asynq.Client
	ins   *asynq.Inspector
	every time.Duration // the workers' heartbeat
}

// NewClient returns a Client on rdb whose workers beat every heartbeat
// (DefaultHeartbeat when zero; the workers' own setting, KeepAlive's and
// WorkerAlive's every). Every waiting request holds one of rdb's pooled
// connections in BLPOP: size the pool above the concurrency.
func NewClient(rdb redis.UniversalClient, heartbeat time.Duration) *Client {
	return &Client{rdb: rdb, aq: asynq.NewClientFromRedisClient(rdb), ins: asynq.NewInspectorFromRedisClient(rdb),
		every: beatEvery(heartbeat)}
}

// ErrTimeout is returned by Do when no result arrived before the deadline.
var ErrTimeout = errors.New("no result before the deadline")

// A worker proves it is still at a task by refreshing AliveKey every
// heartbeat (HEARTBEAT_INTERVAL, DefaultHeartbeat unless set); the key
// lives aliveBeats heartbeats, long enough to survive a missed beat or a
// short Redis blip. The web side looks every heartbeat while it waits, so
// a worker that dies is noticed within aliveBeats + 1 heartbeats. Web and
// worker processes must beat alike: a web process that looks faster than
// the workers beat takes the living for dead after a Redis outage.
const (
	DefaultHeartbeat = time.Second
	aliveBeats       = 3
)

// beatEvery is the heartbeat every, DefaultHeartbeat when zero.
func beatEvery(every time.Duration) time.Duration {
	if every <= 0 {
		return DefaultHeartbeat
	}
	return every
}

// aliveTTL is the lifetime of a key refreshed every heartbeat.
func aliveTTL(every time.Duration) time.Duration { return aliveBeats * beatEvery(every) }

// maxDeaths is how many worker processes one request's task may take down:
// a task whose worker died during it is run once more, by another; one
// that took down two is ended (ErrWorkersDied), so that a photo that kills
// every worker it touches cannot take the fleet down with it.
const maxDeaths = 2

// ErrWithdrawn is returned by Do when no worker had taken the task up by
// the request's StartBy: it was taken off the queue unstarted, because it
// could no longer finish by its deadline.
var ErrWithdrawn = errors.New("no worker took the task up in time to finish it by its deadline")

// OverranError is Do's ErrTimeout for a task a worker was at when the
// deadline passed: Ran is how long, at least, it had been running (from
// the first heartbeat seen, looked for every heartbeat), a lower bound on
// its processing time.
type OverranError struct{ Ran time.Duration }

func (e *OverranError) Error() string {
	return fmt.Sprintf("%v (the task had been running %v)", ErrTimeout, e.Ran.Round(time.Millisecond))
}

func (e *OverranError) Unwrap() error { return ErrTimeout }

// ErrWorkersDied is returned by Do when the worker processes running the
// request's task died during it maxDeaths times: the task is not run
// again.
var ErrWorkersDied = errors.New("the worker processes running the task died during it")

// maxLost is how many times Do enqueues a request again whose task, photo
// or result Redis lost (a master that failed before its replica had the
// write); then it ends with ErrLost.
const maxLost = 2

// ErrLost is returned by Do when Redis lost the request's task, inputs or
// result more than maxLost times.
var ErrLost = errors.New("redis lost the task, its photo or its result")

// Do stores the inputs, enqueues the task and blocks until a worker answers,
// the deadline passes (ErrTimeout), the task has killed maxDeaths worker
// processes (ErrWorkersDied) or ctx is done. The inputs are removed before
// Do returns, whatever happened, so a copy of the task still queued finds
// nothing to do.
//
// It survives what happens around it within the deadline: Redis errors
// (a restart, a failover, a dropped connection) are retried with backoff,
// and a worker process that dies at the task (watch) has the task run
// again by another.
func (c *Client) Do(ctx context.Context, req Request) (*Result, error) {
	ttl := time.Until(req.Deadline) + 5*time.Second
	if ttl <= 5*time.Second {
		return nil, ErrTimeout
	}
	ctx, cancel := context.WithDeadline(ctx, req.Deadline)
	defer cancel()
	p := Payload{
		RequestID: req.ID, Op: req.Params.Op, AccountID: req.AccountID, Design: req.Design != nil, Backdrop: req.Backdrop != nil,
		Asset: req.Asset, DesignAsset: req.DesignAsset,
		Params: req.Params, EnqueuedAt: time.Now(), Deadline: req.Deadline, Run: 1,
	}
	startBy := func() time.Time {
		if req.StartBy == nil {
			return req.Deadline
		}
		if t := req.StartBy(); t.Before(req.Deadline) {
			return t
		}
		return req.Deadline
	}
	p.StartBy = startBy()
	withdrawable := req.StartBy != nil
	photoKey, designKey, backdropKey, resultKey := PhotoKey(req.ID), DesignKey(req.ID), BackdropKey(req.ID), ResultKey(req.ID)
	// Deleting inputs on the way out makes a late worker find nothing to do.
	defer func() {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer dcancel()
		redisha.Retry(dctx, func(ctx context.Context) error { return c.rdb.Del(ctx, photoKey, designKey, backdropKey).Err() })
	}()
	store := func() error {
		return redisha.Retry(ctx, func(ctx context.Context) error {
			pipe := c.rdb.Pipeline()
			pipe.Set(ctx, photoKey, req.Photo, ttl)
			if req.Design != nil {
				pipe.Set(ctx, designKey, req.Design, ttl)
			}
			if req.Backdrop != nil {
				pipe.Set(ctx, backdropKey, req.Backdrop, ttl)
			}
			_, err := pipe.Exec(ctx)
			return err
		})
	}
	if err := store(); err != nil {
		return nil, c.failed(ctx, "store inputs", err)
	}
	taskID := func() string {
		if p.Run > 1 {
			return fmt.Sprintf("%s.%d", req.ID, p.Run)
		}
		return req.ID
	}
	enqueue := func() error {
		id := taskID()
		body, err := json.Marshal(p)
		if err != nil {
			return err
		}
		task := asynq.NewTask(taskTypeOf(req.Params), body,
			asynq.Queue(Queue), asynq.Deadline(req.Deadline), asynq.MaxRetry(0), asynq.TaskID(id))
		return Enqueue(ctx, c.rdb, c.aq, task)
	}
	if err := enqueue(); err != nil {
		return nil, c.failed(ctx, "enqueue", err)
	}
	w := watch{confirm: aliveTTL(c.every)}
	lost := 0
	var started time.Time // when a worker was first seen at the task
	overran := func(err error) error {
		if errors.Is(err, ErrTimeout) && !started.IsZero() {
			return &OverranError{Ran: time.Since(started)}
		}
		return err
	}
	for {
		// Redis going away is waited out with backoff (redisha.Retry);
		// redis.Nil is a slice of the wait passing with no answer.
		var vals []string
		until := req.Deadline
		if withdrawable {
			until = startBy()
		}
		err := redisha.Retry(ctx, func(ctx context.Context) (err error) {
			vals, err = blpop(ctx, c.rdb, min(c.every, max(time.Until(until), time.Millisecond)), resultKey)
			if redisha.Transient(err) {
				w.unreachable(time.Now())
			}
			return err
		})
		switch {
		case err == nil && errors.Is(ctx.Err(), context.Canceled):
			// A result popped as the caller gave up (its client left) is
			// not theirs to deliver.
			return nil, c.failed(ctx, "wait for result", ctx.Err())
		case err == nil:
			return DecodeResult([]byte(vals[1])) // at the deadline too: the work is done
		case ctx.Err() != nil:
			return nil, overran(c.failed(ctx, "wait for result", ctx.Err()))
		case !errors.Is(err, redis.Nil):
			return nil, c.failed(ctx, "wait for result", err)
		}
		// At StartBy a task no worker has taken up is taken off the queue:
		// it could no longer finish by its deadline. Asynq deletes only a
		// pending task, atomically, so one a worker holds runs on.
		if withdrawable && !time.Now().Before(startBy()) {
			withdrawable = false
			if err := c.ins.DeleteTask(Queue, taskID()); err == nil {
				return nil, ErrWithdrawn
			}
		}
		holder, process, err := c.look(ctx, req.ID, w.holder)
		if err != nil {
			w.unreachable(time.Now())
			continue
		}
		if holder != "" && started.IsZero() {
			started = time.Now()
		}
		// Nobody beats for the task and Asynq no longer has it to run, yet
		// no result came: a master failed before its replica had the task,
		// the photo or the result (a worker finding no photo drops the
		// task), or the worker could not deliver. Or Asynq has it taken
		// from the queue, but no worker came to it (watch.unheld). The
		// inputs are stored and the task enqueued again.
		state := taskUnknown
		if holder == "" {
			state = c.stateOf(ctx, taskID())
		}
		if state != taskActive {
			w.unheldSince = time.Time{}
		}
		if state == taskGone || state == taskActive && w.holder == "" && w.unheld(time.Now()) {
			if lost++; lost > maxLost {
				return nil, fmt.Errorf("%w (%d times)", ErrLost, lost)
			}
			p.Run++
			w = watch{confirm: w.confirm, deaths: w.deaths, dead: w.dead, lastOutage: w.lastOutage}
			if err := store(); err != nil {
				return nil, c.failed(ctx, "store inputs again", err)
			}
			if err := enqueue(); err != nil {
				return nil, c.failed(ctx, "enqueue again", err)
			}
			continue
		}
		switch w.observe(time.Now(), holder, process) {
		case died:
			if w.deaths >= maxDeaths {
				return nil, fmt.Errorf("%w (%d times; the last was %s)", ErrWorkersDied, w.deaths, w.dead)
			}
			p.Run++
			if err := enqueue(); err != nil {
				return nil, c.failed(ctx, "enqueue again", err)
			}
		}
	}
}

// blpop pops key's first element, waiting at most d (at least a
// millisecond). BLPOP takes its timeout in decimal seconds, but go-redis's
// BLPop rounds one under a second up to a whole second (and logs it),
// which would hold the last wait of a call up to a second past its
// deadline; so a wait under a second is sent as written. go-redis adds a
// whole-second BLPop's timeout to the connection's read deadline; a
// shorter one fits within the client's own read timeout.
func blpop(ctx context.Context, rdb redis.UniversalClient, d time.Duration, key string) ([]string, error) {
	if d >= time.Second {
		return rdb.BLPop(ctx, d, key).Result()
	}
	return rdb.Do(ctx, "blpop", key, strconv.FormatFloat(max(d, time.Millisecond).Seconds(), 'f', 3, 64)).StringSlice()
}

// Enqueue enqueues task, trying again while Redis is out of reach until
// ctx ends (then that error is returned). Asynq turns the error of its
// enqueue script into text ("redis eval error: dial tcp ...: connection
// refused"), losing the cause, so a failed enqueue asks Redis itself: a
// PING that fails too is the error returned (transient when Redis is
// down); one that answers means Redis is back, and the enqueue is tried
// once more at once. On a cluster every master is pinged: any one may
// hold the queue's keys, and the others answering says nothing of it. A
// task id already taken counts as done: an earlier try went through
// before its answer was lost.
func Enqueue(ctx context.Context, rdb redis.UniversalClient, aq *asynq.Client, task *asynq.Task) error {
	return redisha.Retry(ctx, func(ctx context.Context) error { return enqueueOnce(ctx, rdb, aq, task) })
}

// enqueueOnce is one try of Enqueue, its error transient when Redis was
// out of reach.
func enqueueOnce(ctx context.Context, rdb redis.UniversalClient, aq *asynq.Client, task *asynq.Task) error {
	enqueue := func() error {
		_, err := aq.EnqueueContext(ctx, task)
		if errors.Is(err, asynq.ErrTaskIDConflict) {
			return nil
		}
		return err
	}
	err := enqueue()
	if err == nil || redisha.Transient(err) || ctx.Err() != nil {
		return err
	}
	if perr := ping(ctx, rdb); perr != nil {
		return fmt.Errorf("%w (Redis: %w)", err, perr)
	}
	return enqueue()
}

// ping pings rdb, or every master of a cluster.
func ping(ctx context.Context, rdb redis.UniversalClient) error {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return rdb.Ping(ctx).Err()
	}
	return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() })
}

// failed is Do's error once the request cannot go on: ErrTimeout when its
// deadline passed, ctx's error when the caller gave up, else err.
func (c *Client) failed(ctx context.Context, what string, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ErrTimeout
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Close releases the Asynq client; the Redis client belongs to the caller.
func (c *Client) Close() error { return c.aq.Close() }
