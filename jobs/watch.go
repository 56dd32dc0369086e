package jobs

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// The web side's watch over a task: whether a worker still beats for it,
// whether Asynq still has it, and when a missing beat counts as a death.

// taskState is what Asynq holds of a task, as the web side's watch needs it.
type taskState int

const (
	taskUnknown taskState = iota // Redis did not answer, or not in time
	taskQueued                   // waiting to be taken: pending, scheduled or to retry
	taskActive                   // taken from the queue by a worker
	taskGone                     // not in the photo queue (nor is the queue), or archived
)

// stateOf reads Asynq's state of the task of that id. Gone means Asynq no
// longer has it to run: archived is where a run that failed without
// answering ends (the worker could not deliver through an outage, say:
// tasks are never retried by Asynq). An error, or ctx ending first, is
// taskUnknown: the wait goes on.
func (c *Client) stateOf(ctx context.Context, id string) taskState {
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
		switch {
		case errors.Is(a.err, asynq.ErrTaskNotFound) || errors.Is(a.err, asynq.ErrQueueNotFound):
			return taskGone
		case a.err != nil:
			return taskUnknown
		case a.info.State == asynq.TaskStateArchived:
			return taskGone
		case a.info.State == asynq.TaskStateActive:
			return taskActive
		}
		return taskQueued
	case <-ctx.Done():
		return taskUnknown
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
// may have lost the keys, which the worker beats back within a heartbeat
// of Redis answering) it counts only once it has stayed missing for
// confirm with Redis answering, so a Redis blip never ends a task.
type watch struct {
	// confirm is how long, after a Redis outage, a worker process's key
	// must stay missing with Redis answering before the process is taken
	// to be gone: the key's own lifetime (aliveTTL), so that a process
	// that beats at all is seen again. Zero: that of DefaultHeartbeat.
	confirm      time.Duration
	holder       string    // the worker process at the current run; "" before one is seen
	seen         time.Time // when holder was last seen beating for the task
	missingSince time.Time // when holder's process key was first found missing after an outage
	lastOutage   time.Time // when Redis last failed to answer
	unheldSince  time.Time // when the task was first seen taken from the queue with no worker at it, after the last outage
	deaths       int       // worker processes that died during the task
	dead         string    // the last of them
}

type verdict int

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
	if now.Sub(w.missingSince) < cmp.Or(w.confirm, aliveTTL(0)) {
		return waiting
	}
	return w.death()
}

// unheld takes that, at now, Asynq has the task taken from the queue
// (active) while no worker beats for it, none having been seen at this
// run: a worker's dequeue went through but Redis's answer never reached
// it (Redis killed as it answered), or the worker died before its first
// beat. Asynq would hand the task on only after its lease (30 s) and its
// recoverer's round (a minute), past most deadlines. Once that has held
// for confirm with Redis answering, unheld returns true: the task is to
// be run again.
func (w *watch) unheld(now time.Time) bool {
	if w.unheldSince.IsZero() || w.unheldSince.Before(w.lastOutage) {
		w.unheldSince = now
		return false
	}
	return now.Sub(w.unheldSince) >= cmp.Or(w.confirm, aliveTTL(0))
}

func (w *watch) death() verdict {
	w.deaths++
	w.dead = w.holder
	w.holder, w.missingSince = "", time.Time{}
	return died
}

const (
	waiting verdict = iota // the task runs, or waits for a worker
	died                   // the worker process at the task is gone: run it again
)
