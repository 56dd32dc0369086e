// Package worker runs the image work: an Asynq server whose photo handler
// reads a request's images from Redis, runs imageops.Process and hands the
// result back to the waiting web process (worker.go, process.go), and whose
// video handler runs a video-blur job to its end (video.go). It knows the
// queue, not the image internals.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"carphoto"
	"carphoto/imageops"
	"carphoto/jobs"
	"carphoto/objstore"
)

// Config is the worker's share of the service configuration.
type Config struct {
	Concurrency       int           // tasks processed at once; the work is CPU-bound, so about the core count
	TaskCheckInterval time.Duration // Asynq's poll interval when the queue is empty: pickup delay vs idle CPU
	ShutdownTimeout   time.Duration // on SIGTERM, how long current tasks may run before they are handed back
	Heartbeat         time.Duration // how often the process and each task it runs beat (jobs.KeepAlive); zero: jobs.DefaultHeartbeat
	MaxPixels         int           // cap on width × height of a decoded image
	MaxSide           int           // cap on each side of a decoded image
	MaxAspect         float64       // cap on a decoded image's longer side ÷ shorter side
	Video             VideoConfig   // video jobs; Video.Store nil leaves them to other workers
	Metrics           Observer      // records finished tasks; nil records nothing
	// Assets reads saved designs and backdrops from the asset store; nil
	// fails every task that names one.
	Assets *objstore.Cache
}

// Observer is what the worker tells the metrics (carphoto/metrics).
type Observer interface {
	TaskDone(op, outcome string, processing time.Duration)
	WorkerRunning(running func() float64)
	// Charged records credits captured by the worker (a video job's, when
	// it is done); photo calls' are recorded by the web side.
	Charged(op string, credits int64)
	// CarRefused records a studio call refused with car_not_found, by
	// reason (imageops.RefusalReason).
	CarRefused(op, reason string)
}

// limits are the bounds every decoded image (photo or design) is held to,
// checked from its header: the web's check again, for a task that did not
// come through it.
func (c Config) limits() imageops.Limits {
	return imageops.Limits{MaxPixels: c.MaxPixels, MaxSide: c.MaxSide, MaxAspect: c.MaxAspect}
}

// Worker processes photo tasks.
type Worker struct {
	cfg     Config
	log     zerolog.Logger
	rdb     redis.UniversalClient
	name    string
	id      string       // this process among all workers, past and present (jobs.WorkerKey)
	running atomic.Int32 // tasks being processed
	pace    jobs.Pace    // this process's processing times
}

// tooLate reports whether a task taken up at start can no longer finish
// by its deadline: past the start-by time its web process set at the
// enqueue, or, while other tasks run here, with less time left than this
// process's pace gives its operation. Alone, a task is run whatever the
// pace says (it runs faster than under load, and the pace learns so).
func (w *Worker) tooLate(p jobs.Payload, start time.Time) bool {
	if !p.StartBy.IsZero() && start.After(p.StartBy) {
		return true
	}
	own, ok := w.pace.Own(p.Op)
	return ok && w.running.Load() > 0 && start.Add(own).After(p.Deadline)
}

// New returns a Worker on rdb.
func New(cfg Config, log zerolog.Logger, rdb redis.UniversalClient) *Worker {
	host, _ := os.Hostname()
	name := fmt.Sprintf("%s:%d", host, os.Getpid())
	return &Worker{cfg: cfg, log: log, rdb: rdb, name: name, id: fmt.Sprintf("%s:%08x", name, rand.Uint32())}
}

// Run serves tasks until ctx is done, then shuts down gracefully: no new
// task is taken, current ones get ShutdownTimeout to finish, and any still
// running after that go back to the queue for another worker.
func (w *Worker) Run(ctx context.Context) error {
	limitMemory(w.cfg.Concurrency)
	srv := asynq.NewServerFromRedisClient(w.rdb, asynq.Config{
		Concurrency:       w.cfg.Concurrency,
		Queues:            map[string]int{jobs.Queue: 1},
		TaskCheckInterval: w.cfg.TaskCheckInterval,
		ShutdownTimeout:   w.cfg.ShutdownTimeout,
		Logger:            asynqLogger{w.log},
		LogLevel:          asynq.WarnLevel,
		// A photo task is never retried: its request has one deadline, and
		// the client is told to retry on processing_failed.
		IsFailure: func(err error) bool { return err != nil },
	})
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.WorkerRunning(func() float64 { return float64(w.running.Load()) })
	}
	mux := asynq.NewServeMux()
	for _, typ := range jobs.TaskTypes() {
		mux.HandleFunc(typ, w.handle)
	}
	// The process's own sign of life, from before its first task to after
	// its last: the web side takes a task's worker to have died only when
	// this lapses (jobs.Client.Do).
	stopAlive := jobs.WorkerAlive(context.WithoutCancel(ctx), w.rdb, w.id, w.cfg.Heartbeat)
	defer stopAlive()
	if err := srv.Start(mux); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	videos := make(chan error, 1)
	if w.cfg.Video.Store != nil {
		go func() { videos <- w.runVideos(ctx) }()
	} else {
		videos <- nil
	}
	w.log.Info().Str("worker", w.id).Int("concurrency", w.cfg.Concurrency).
		Dur("task_check_interval", w.cfg.TaskCheckInterval).Msg("worker started")
	<-ctx.Done()
	w.log.Info().Msg("worker stopping: finishing current tasks")
	srv.Shutdown()
	err := <-videos
	w.log.Info().Msg("worker stopped")
	return err
}

// handle runs one task. It never fails the task for a client's mistake: that
// is a result like any other. A task whose request is gone or past its
// deadline (a task recovered after a crashed worker's lease, say) is
// dropped without processing.
func (w *Worker) handle(ctx context.Context, t *asynq.Task) error {
	var p jobs.Payload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		w.log.Error().Err(err).Str("type", t.Type()).Msg("undecodable task dropped")
		return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
	}
	log := w.log.With().Str("request_id", p.RequestID).Str("op", string(p.Op)).Str("account", p.AccountID).Logger()
	start := time.Now()
	wait := start.Sub(p.EnqueuedAt)
	if !start.Before(p.Deadline) {
		log.Warn().Dur("queue_wait_ms", wait).Msg("task past its deadline dropped unprocessed")
		return nil
	}
	ctx, cancel := context.WithDeadline(ctx, p.Deadline)
	defer cancel()
	if w.tooLate(p, start) {
		// Taken up too late to finish by its deadline at the workers'
		// pace: answered withdrawn, unrun, so that the call is told so
		// at once instead of failing at its deadline.
		log.Warn().Dur("queue_wait_ms", wait).Msg("task taken up after its start-by time: withdrawn unprocessed")
		if w.cfg.Metrics != nil {
			w.cfg.Metrics.TaskDone(string(p.Op), "withdrawn", 0)
		}
		if err := jobs.Deliver(ctx, w.rdb, p, jobs.Withdrawn()); err != nil {
			return fmt.Errorf("deliver withdrawal: %w", err)
		}
		return nil
	}
	// The heartbeat starts before anything else and lasts until the
	// result is handed over (through a Redis restart too): a worker that
	// dies from here on is noticed by the web side, which runs the task
	// again, and a task Asynq has active with no heartbeat is one no
	// worker is at.
	stop := jobs.KeepAlive(ctx, w.rdb, p.RequestID, w.id, w.cfg.Heartbeat)
	defer stop()
	var in imageops.Input
	in, err := jobs.LoadInputs(ctx, w.rdb, p)
	if errors.Is(err, jobs.ErrGone) {
		log.Warn().Dur("queue_wait_ms", wait).Msg("task whose request is gone dropped unprocessed")
		return nil
	}
	if err != nil {
		return err
	}
	// A saved design or backdrop comes from the asset store (through this
	// process's cache), not through Redis.
	var failed *jobs.Result
	if p.Asset != "" {
		var data []byte
		data, failed = w.loadAsset(ctx, log, p.Asset)
		if p.Params.Backdrop != nil {
			in.Backdrop = data
		} else {
			in.Design = data
		}
	}
	if p.DesignAsset != "" && failed == nil {
		in.Design, failed = w.loadAsset(ctx, log, p.DesignAsset)
	}

	if p.Run > 1 {
		// The worker process at an earlier run died during it: what this
		// task is made of is on record before it can take this one too.
		log.Warn().Int("run", p.Run).RawJSON("params", jobs.LogParams(p.Params)).Int("photo_bytes", len(in.Photo)).
			Int("design_bytes", len(in.Design)).Int("backdrop_bytes", len(in.Backdrop)).Msg("task run again: the worker at its last run died during it")
	}
	log.Info().Dur("queue_wait_ms", wait).Msg("task started")
	w.running.Add(1)
	defer func() {
		// Once the answer is out: a large task's memory goes back to the
		// system when no other task is running.
		if w.running.Add(-1) == 0 {
			releaseMemory()
		}
	}()
	in.Limits = w.cfg.limits()
	res := failed
	if res == nil {
		res = w.safeProcess(ctx, log, in, p.Params)
	}
	res.QueueWait, res.Processing, res.Worker = wait, time.Since(start), w.name
	w.pace.Observe(p.Op, res.Processing) // a late task's too: a lower bound
	outcome := "ok"
	if !res.OK() {
		outcome = res.Code
	}
	if ctx.Err() != nil {
		outcome = "late"
	}
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.TaskDone(string(p.Op), outcome, res.Processing)
	}
	if ctx.Err() != nil {
		log.Warn().Dur("queue_wait_ms", wait).Dur("processing_ms", res.Processing).Msg("result too late, dropped")
		return nil
	}
	// Delivery rides through a Redis restart or failover until the
	// request's own deadline, as the web side's steps do: the request
	// waits for the result until then.
	dctx, dcancel := context.WithDeadline(context.WithoutCancel(ctx), p.Deadline)
	defer dcancel()
	if err := jobs.Deliver(dctx, w.rdb, p, res); err != nil {
		return fmt.Errorf("deliver result: %w", err)
	}
	ev := log.Info()
	if !res.OK() {
		ev = ev.Str("code", res.Code)
	}
	ev.Dur("queue_wait_ms", wait).Dur("processing_ms", res.Processing).Int("plates", res.PlatesFound).
		Int("bytes_out", len(res.Body)).Msg("task done")
	// Once the answer is out: the pace for web processes that have seen
	// no task of this operation yet (jobs.SeedPace).
	if err := jobs.PublishPace(ctx, w.rdb, &w.pace, p.Op); err != nil {
		log.Debug().Err(err).Msg("pace not published")
	}
	return nil
}

// taskMemory is the most memory one task takes (60 MP car-shadow).
const taskMemory = 600 << 20

// limitMemory sets, unless GOMEMLIMIT does, a soft memory limit the garbage
// collector works to stay under: each task's budget and some room for the
// rest of the process.
func limitMemory(concurrency int) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(max(concurrency, 1))*taskMemory + 256<<20)
	}
}

// releaseMemory hands the heap a large task left behind back to the
// operating system, when no task is running: otherwise the hundreds of
// megabytes a 60 MP photo took stay with the process for minutes, until
// the runtime's scavenger gets to them. A small heap is left alone; the
// forced collection costs a few milliseconds.
func releaseMemory() {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[1].Value.Uint64()-s[0].Value.Uint64() > 256<<20 {
		debug.FreeOSMemory()
	}
}

// safeProcess runs the operation and turns any failure, panics included,
// into a result the client can read.
func (w *Worker) safeProcess(ctx context.Context, log zerolog.Logger, in imageops.Input, p imageops.Params) (res *jobs.Result) {
	defer func() {
		if r := recover(); r != nil {
			log.Error().Str("panic", fmt.Sprint(r)).Bytes("stack", debug.Stack()).Msg("processing panicked")
			res = failure(carphoto.Errorf(carphoto.EProcessingFailed, "processing failed on our side; you were not charged"))
		}
	}()
	res, err := process(ctx, in, p)
	if err != nil {
		if r := imageops.RefusalReason(err); r != "" && w.cfg.Metrics != nil {
			w.cfg.Metrics.CarRefused(string(p.Op), r)
		}
		if carphoto.ErrorCode(err) == carphoto.EInternal || carphoto.ErrorCode(err) == carphoto.EProcessingFailed {
			log.Error().Err(err).Msg("processing failed")
		}
		return failure(err)
	}
	return res
}

// failure is the result for err: client errors keep their code and message,
// anything unexpected becomes processing_failed without leaking its cause.
func failure(err error) *jobs.Result {
	code := carphoto.ErrorCode(err)
	switch code {
	case carphoto.EInvalidParams, carphoto.EPlateNotFound, carphoto.ECarNotFound, carphoto.ECarTruncated, carphoto.ECarOccluded, carphoto.EProcessingFailed:
		return &jobs.Result{Code: code, Message: carphoto.ErrorMessage(err)}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return jobs.Overran() // the call's deadline, not the photo: overload
	}
	return &jobs.Result{Code: carphoto.EProcessingFailed, Message: "processing failed on our side; you were not charged"}
}

// asynqLogger sends Asynq's own log lines to zerolog.
type asynqLogger struct{ l zerolog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug().Msg(fmt.Sprint(args...)) }
func (a asynqLogger) Info(args ...any)  { a.l.Info().Msg(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn().Msg(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) { a.l.Error().Msg(fmt.Sprint(args...)) }
func (a asynqLogger) Fatal(args ...any) { a.l.Fatal().Msg(fmt.Sprint(args...)) }
