package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"carphoto"
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
}

// Client enqueues requests and waits for their results.
type Client struct {
	rdb redis.UniversalClient
	aq  *asynq.Client
	ins *asynq.Inspector
}

// NewClient returns a Client on rdb. Every waiting request holds one of
// rdb's pooled connections in BLPOP: size the pool above the concurrency.
func NewClient(rdb redis.UniversalClient) *Client {
	return &Client{rdb: rdb, aq: asynq.NewClientFromRedisClient(rdb), ins: asynq.NewInspectorFromRedisClient(rdb)}
}

// ErrTimeout is returned by Do when no result arrived before the deadline.
var ErrTimeout = errors.New("no result before the deadline")

// A worker proves it is still at a task by refreshing AliveKey every
// aliveEvery; the key lives aliveTTL, long enough to survive a missed beat
// or a short Redis blip. The web side looks every aliveEvery while it
// waits, so a worker that dies is noticed within aliveTTL + aliveEvery.
const (
	aliveEvery = time.Second
	aliveTTL   = 3 * time.Second
)

// maxDeaths is how many worker processes one request's task may take down:
// a task whose worker died during it is run once more, by another; one
// that took down two is ended (ErrWorkersDied), so that a photo that kills
// every worker it touches cannot take the fleet down with it.
const maxDeaths = 2

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
	var w watch
	lost := 0
	for {
		// BLPOP has a resolution of milliseconds; go-redis adds the timeout
		// to the connection's read deadline for blocking commands. Redis
		// going away is waited out with backoff (redisha.Retry); redis.Nil is a
		// slice of the wait passing with no answer.
		var vals []string
		err := redisha.Retry(ctx, func(ctx context.Context) (err error) {
			vals, err = c.rdb.BLPop(ctx, min(aliveEvery, max(time.Until(req.Deadline), time.Millisecond)), resultKey).Result()
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
			return nil, c.failed(ctx, "wait for result", ctx.Err())
		case !errors.Is(err, redis.Nil):
			return nil, c.failed(ctx, "wait for result", err)
		}
		holder, process, err := c.look(ctx, req.ID, w.holder)
		if err != nil {
			w.unreachable(time.Now())
			continue
		}
		// Nobody beats for the task and Asynq no longer has it to run, yet
		// no result came: a master failed before its replica had the task,
		// the photo or the result (a worker finding no photo drops the
		// task), or the worker could not deliver. The inputs are stored and
		// the task enqueued again.
		if holder == "" && c.taskGone(ctx, taskID()) {
			if lost++; lost > maxLost {
				return nil, fmt.Errorf("%w (%d times)", ErrLost, lost)
			}
			p.Run++
			w = watch{deaths: w.deaths, dead: w.dead, lastOutage: w.lastOutage}
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

// taskGone reports whether Asynq no longer has the task of that id to
// run: it is not in the photo queue (nor is the queue), or it was
// archived, which is where a run that failed without answering ends (the
// worker could not deliver through an outage, say: tasks are never
// retried by Asynq). An error, or ctx ending first, is not gone: the wait
// goes on.
func (c *Client) taskGone(ctx context.Context, id string) bool {
	type answer struct {
		info *asynq.TaskInfo
		err  error
	}
	// Inspector calls take no context: the wait is bounded here instead.
	done := make(chan answer, 1)
	go func() {
		info, err := c.ins.GetTaskInfo(Queue, id)
		done <- answer{info, err}
	}()
	select {
	case a := <-done:
		if a.err == nil {
			return a.info.State == asynq.TaskStateArchived
		}
		return errors.Is(a.err, asynq.ErrTaskNotFound) || errors.Is(a.err, asynq.ErrQueueNotFound)
	case <-ctx.Done():
		return false
	}
}

// look reads the id of the worker at the request's task (empty when none
// beats for it) and, for worker, the value of its process's WorkerKey
// (empty when it lapsed).
func (c *Client) look(ctx context.Context, requestID, worker string) (holder, process string, err error) {
	pipe := c.rdb.Pipeline()
	h := pipe.Get(ctx, AliveKey(requestID))
	var pr *redis.StringCmd
	if worker != "" {
		pr = pipe.Get(ctx, WorkerKey(worker))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return "", "", err
	}
	holder = h.Val()
	if pr != nil {
		process = pr.Val()
	}
	return holder, process, nil
}

// watch decides, from what Do sees while it waits, whether the worker
// process running the task died during it. Only the process's own sign of
// life counts (WorkerKey): a task's heartbeat that lapses while its process
// still beats is waited out, and a process that stopped cleanly handed the
// task back to the queue. A process key found missing means death at once
// when Redis answered throughout since the worker was last seen beating
// (both keys ran out on their own); after an outage (a restart or failover
// may have lost the keys, which the worker beats back within aliveEvery of
// Redis answering) it counts only once it has stayed missing for
// confirmDeath with Redis answering, so a Redis blip never ends a task.
type watch struct {
	holder       string    // the worker process at the current run; "" before one is seen
	seen         time.Time // when holder was last seen beating for the task
	missingSince time.Time // when holder's process key was first found missing after an outage
	lastOutage   time.Time // when Redis last failed to answer
	deaths       int       // worker processes that died during the task
	dead         string    // the last of them
}

// confirmDeath is how long, after a Redis outage, a worker process's key
// must stay missing with Redis answering before the process is taken to be
// gone: more than the key's own lifetime, so a process that beats at all
// is seen again.
const confirmDeath = aliveTTL

type verdict int

const (
	waiting verdict = iota // the task runs, or waits for a worker
	died                   // the worker process at the task is gone: run it again
)

// unreachable records that Redis did not answer at now.
func (w *watch) unreachable(now time.Time) { w.lastOutage = now }

// observe takes what Redis holds at now: the id in the task's AliveKey
// (holder) and, when a holder was seen before, its process's WorkerKey.
func (w *watch) observe(now time.Time, holder, process string) verdict {
	if holder != "" {
		w.holder, w.seen, w.missingSince = holder, now, time.Time{}
		return waiting
	}
	switch {
	case w.holder == "":
		return waiting // not started yet
	case process == WorkerStopped:
		// A clean stop handed the task back to the queue, which runs it
		// again: no death, and nothing to enqueue.
		w.holder, w.missingSince = "", time.Time{}
		return waiting
	case process != "":
		w.missingSince = time.Time{} // the process lives: its answer or the deadline will come
		return waiting
	case !w.lastOutage.After(w.seen):
		return w.death() // both keys ran out with Redis answering
	}
	if w.missingSince.IsZero() || w.missingSince.Before(w.lastOutage) {
		w.missingSince = now
		return waiting
	}
	if now.Sub(w.missingSince) < confirmDeath {
		return waiting
	}
	return w.death()
}

func (w *watch) death() verdict {
	w.deaths++
	w.dead = w.holder
	w.holder, w.missingSince = "", time.Time{}
	return died
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

// sleep waits d, or less if ctx ends first; it reports whether ctx is
// still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// KeepAlive refreshes the request's AliveKey with workerID until the
// returned stop is called: the worker's heartbeat for one task. Failed
// refreshes are left to the next beat.
func KeepAlive(ctx context.Context, rdb redis.UniversalClient, requestID, workerID string) (stop func()) {
	key := AliveKey(requestID)
	return Beat(ctx, aliveEvery, func(ctx context.Context) { rdb.Set(ctx, key, workerID, aliveTTL) })
}

// WorkerAlive refreshes the process's WorkerKey until the returned stop is
// called, which marks it WorkerStopped for a minute: a worker process's
// sign of life, by which the web side tells a worker that died from a
// heartbeat that lapsed. Run it for the whole life of the process.
func WorkerAlive(ctx context.Context, rdb redis.UniversalClient, workerID string) (stop func()) {
	key := WorkerKey(workerID)
	stopBeat := Beat(ctx, aliveEvery, func(ctx context.Context) { rdb.Set(ctx, key, 1, aliveTTL) })
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

// Close releases the Asynq client; the Redis client belongs to the caller.
func (c *Client) Close() error { return c.aq.Close() }

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
		_, err := pipe.Exec(ctx)
		return err
	})
}
