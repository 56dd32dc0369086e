package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/hibiken/asynq"

	"carphoto"
	"carphoto/billing"
	"carphoto/imageops"
	"carphoto/jobs"
	"carphoto/objstore"
	"carphoto/video"
)

// VideoConfig is the worker's share of video jobs; a nil Store leaves
// video jobs to other workers.
type VideoConfig struct {
	Concurrency int // video jobs at once, on their own queue
	Store       objstore.Store
	Billing     *billing.Service
	Notifier    video.Notifier
	ResultTTL   time.Duration
	Limits      video.Limits // the web's bounds, checked again from the probe
}

// runVideos serves the video queue with an Asynq server of its own, so
// that long video jobs never take the photo queue's slots.
//
// Asynq is the one owner of a video job's runs. A run that fails is
// retried by it (videoRetryDelay); a worker process that dies at a job
// stops extending the task's lease, and Asynq's recoverer in any other
// worker takes the task back when the lease has lapsed (a minute or two,
// fixed by Asynq) and runs it again, its retry count up by one, or
// archives it when it had its runs (the task's MaxRetry). archivedVideos
// ends an archived job failed, uncharged, whether or not anyone polls it.
func (w *Worker) runVideos(ctx context.Context) error {
	vc := w.cfg.Video
	if err := video.Available(); err != nil {
		// Jobs stay queued for a worker that can run them; say so.
		w.log.Warn().Err(err).Msg("video jobs are not served by this worker")
		<-ctx.Done()
		return nil
	}
	srv := asynq.NewServerFromRedisClient(w.rdb, asynq.Config{
		Concurrency:              max(vc.Concurrency, 1),
		Queues:                   map[string]int{jobs.VideoQueue: 1},
		TaskCheckInterval:        time.Second,
		DelayedTaskCheckInterval: time.Second,
		RetryDelayFunc:           videoRetryDelay,
		ShutdownTimeout:          w.cfg.ShutdownTimeout,
		Logger:                   asynqLogger{w.log},
		LogLevel:                 asynq.WarnLevel,
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc(jobs.VideoTaskType, w.handleVideo)
	if err := srv.Start(mux); err != nil {
		return fmt.Errorf("start video worker: %w", err)
	}
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		w.archivedVideos(ctx, archiveSweep)
	}()
	<-ctx.Done()
	srv.Shutdown()
	<-swept
	return nil
}

// videoRetryDelay is the retry policy of video jobs: the next run starts
// a second after a failed one (or, after a worker died, once Asynq took
// the task back), since the client is waiting for it and a job's runs are
// few (its MaxRetry).
func videoRetryDelay(n int, err error, t *asynq.Task) time.Duration { return time.Second }

// archiveSweep is how often a worker looks for video tasks that Asynq
// archived.
const archiveSweep = 5 * time.Second

// archivedVideos ends, every period until ctx is done, the jobs whose
// tasks Asynq archived: a task whose worker died at its last allowed run
// is archived by Asynq's recoverer without calling any handler. Its job
// ends failed, uncharged, its webhook called; a job its last run already
// ended is left as it is. The task is then deleted from the archive.
// Every worker sweeps; the job's end is recorded once.
func (w *Worker) archivedVideos(ctx context.Context, period time.Duration) {
	ins := asynq.NewInspectorFromRedisClient(w.rdb)
	js := video.Jobs{RDB: w.rdb, TTL: w.cfg.Video.ResultTTL}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tasks, err := ins.ListArchivedTasks(jobs.VideoQueue, asynq.PageSize(100))
		if err != nil {
			if !errors.Is(err, asynq.ErrQueueNotFound) {
				w.log.Warn().Err(err).Msg("list archived video tasks")
			}
			continue
		}
		for _, ti := range tasks {
			w.endArchived(ctx, ins, js, ti)
		}
	}
}

// endArchived ends the job of one archived video task and deletes the
// task.
func (w *Worker) endArchived(ctx context.Context, ins *asynq.Inspector, js video.Jobs, ti *asynq.TaskInfo) {
	var p jobs.VideoPayload
	if err := json.Unmarshal(ti.Payload, &p); err == nil && p.JobID != "" {
		job, err := js.Get(ctx, p.JobID)
		if err != nil {
			w.log.Warn().Err(err).Str("job", p.JobID).Msg("read the archived video task's job")
			return // the next sweep tries again
		}
		if job != nil && job.Status != video.Done && job.Status != video.Failed {
			w.log.Error().Str("job", job.ID).Str("account", job.Account).Str("style", job.Style).
				Float64("duration", job.Duration).Int("frames", job.FramesTotal).Int("runs", ti.Retried+1).
				Str("last_error", ti.LastErr).Msg("video job ended: its runs are spent (the worker processes at them died or failed)")
			w.endVideo(job, video.Failure)
		}
	}
	if err := ins.DeleteTask(jobs.VideoQueue, ti.ID); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
		w.log.Warn().Err(err).Str("task", ti.ID).Msg("delete the archived video task")
	}
}

// handleVideo runs one video job: blur its plates frame by frame, store the
// MP4, charge the hold, call the webhook. A client's mistake ends the job
// failed; anything else is retried by the queue, and the last try's
// failure ends it failed. Failed jobs are never charged.
func (w *Worker) handleVideo(ctx context.Context, t *asynq.Task) error {
	vc := w.cfg.Video
	var p jobs.VideoPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
	}
	js := video.Jobs{RDB: w.rdb, TTL: vc.ResultTTL}
	job, err := js.Get(ctx, p.JobID)
	if err != nil {
		return err
	}
	if job == nil || job.Status == video.Done || job.Status == video.Failed {
		return nil // expired or over: nothing to do
	}
	retried, _ := asynq.GetRetryCount(ctx)
	most, _ := asynq.GetMaxRetry(ctx)
	job.Attempt = retried + 1
	log := w.log.With().Str("job", job.ID).Str("account", job.Account).Logger()
	if retried > 0 {
		// An earlier run failed, or its worker process died during it: what
		// the job is made of is on record before it can take this one too.
		log.Warn().Int("attempt", job.Attempt).Str("style", job.Style).Float64("duration", job.Duration).
			Int("frames", job.FramesTotal).Msg("video job run again by the queue")
	}
	err = w.blurVideo(ctx, js, job)
	if err == nil {
		return nil
	}
	var ce *carphoto.Error
	client := errors.As(err, &ce) && ce.Code == carphoto.EInvalidParams
	if !client && retried < most && ctx.Err() == nil {
		log.Warn().Err(err).Int("attempt", job.Attempt).Msg("video job failed; the queue will run it again")
		return err
	}
	log.Error().Err(err).Msg("video job failed")
	end := video.Failure
	if client {
		end = video.Outcome{Status: video.Failed, Code: ce.Code, Error: ce.Message}
	}
	w.endVideo(job, end)
	return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
}

func (w *Worker) blurVideo(ctx context.Context, js video.Jobs, job *video.Job) error {
	vc := w.cfg.Video
	if _, err := js.Update(ctx, job.ID, map[string]any{"status": video.Processing, "frames_done": 0,
		"attempt": job.Attempt, "worker": w.id, "started": time.Now().UnixMilli()}); err != nil {
		return err
	}
	w.log.Info().Str("job", job.ID).Int("attempt", job.Attempt).Msg("video job started")
	in, done, err := vc.Store.Path(ctx, video.InputKey(job.ID))
	if err != nil {
		return fmt.Errorf("video input: %w", err)
	}
	defer done()
	info, err := video.Probe(ctx, in)
	if err != nil {
		return err
	}
	if err := vc.Limits.Check(info); err != nil {
		return err
	}
	// No more than the duration held for is processed, whatever the
	// file's own streams hold past what its header said.
	if job.Duration > 0 && info.Duration > job.Duration {
		info.Duration = job.Duration
		info.Frames = int(math.Ceil(info.Duration * info.FPS))
	}
	// The style was read at the edge; read again from the job's record
	// with the same check, as a photo task's is (jobs, Style.UnmarshalText).
	style, err := imageops.ParseStyle(job.Style)
	if err != nil {
		return err
	}
	out := filepath.Join(os.TempDir(), "carphoto-"+job.ID+".mp4")
	defer os.Remove(out)
	last := time.Time{}
	_, err = video.Blur(ctx, in, out, info, video.Options{
		Style: style,
		Progress: func(d, total int) {
			if time.Since(last) > 500*time.Millisecond || d == total {
				last = time.Now()
				js.Progress(ctx, job.ID, d, total)
			}
		},
	})
	if err != nil {
		return err
	}
	f, err := os.Open(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := vc.Store.Put(ctx, video.ResultKey(job.ID), f); err != nil {
		return fmt.Errorf("store result: %w", err)
	}
	w.endVideo(job, video.Outcome{Status: video.Done})
	return nil
}

// endVideo ends a job: its outcome recorded and its hold settled once
// (video.Jobs.End), then, by the call that ended it, the charge counted,
// the input dropped and the webhook called. Every end of a job comes
// here: a run's success or last failure, and a task Asynq archived.
func (w *Worker) endVideo(job *video.Job, end video.Outcome) {
	vc := w.cfg.Video
	js := video.Jobs{RDB: w.rdb, TTL: vc.ResultTTL}
	log := w.log.With().Str("job", job.ID).Str("account", job.Account).Logger()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	end, ended, err := js.End(ctx, vc.Billing, job, end)
	if err != nil {
		log.Error().Err(err).Str("status", end.Status).Msg("end the video job")
	}
	if !ended {
		return // another run ended it first, or its end was not recorded
	}
	if end.Status == video.Done && w.cfg.Metrics != nil {
		// Counted once: only the call that ended the job gets here.
		w.cfg.Metrics.Charged(string(imageops.VideoBlur), job.Credits)
	}
	vc.Store.Delete(ctx, video.InputKey(job.ID))
	if job.Webhook == "" {
		return
	}
	result := ""
	if end.Status == video.Done {
		result = "/v1/jobs/" + job.ID + "/result"
	}
	body, _ := json.Marshal(map[string]any{"id": job.ID, "status": end.Status, "code": end.Code, "error": end.Error, "resultUrl": result})
	go func() {
		wctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := vc.Notifier.Send(wctx, job.Webhook, body); err != nil {
			log.Warn().Err(err).Msg("webhook not delivered")
		}
	}()
}
