package server

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"carphoto"
	"carphoto/imageops"
	"carphoto/jobs"
)

// Admission: a photo call that cannot start in time to finish within its
// deadline is answered 503 service_unavailable with Retry-After at once,
// uncharged and with its Idempotency-Key unclaimed, instead of waiting to
// fail at its deadline. At its arrival the call is refused when the work
// ahead of it, at the workers' recent pace, leaves too little of its
// deadline for its own processing (admit); a call admitted that has not
// started by its start-by time (its deadline less its own processing,
// startBy) is withdrawn: from its key's waiting line, from the wait for a
// process slot, or from the queue (jobs.ErrWithdrawn, jobs.Withdrawn).

// Overload stages, the metric's label (ctxOverload).
const (
	overloadRefused   = "refused"   // at arrival
	overloadWithdrawn = "withdrawn" // admitted, but not started by its start-by time
	overloadOverran   = "overran"   // started in time, slowed past its deadline by the load
)

// ctxOverload names the stage at which a call was answered overloaded.
const ctxOverload = "carphoto.overload"

// A call's start-by time leaves, before its deadline, its processing time
// (before any task of its operation was seen, guessed as the share
// 1/slackShare of REQUEST_TIMEOUT, at most slackMost) and as much again
// for answering it withdrawn in time: the steps of giving up (Redis round
// trips, on a loaded machine a scheduler's delays) take time too.
const (
	slackShare = 8
	slackMost  = time.Second
)

// startBy is the latest a call of op with this deadline may start and
// still finish by it, at the pace seen.
func (s *Server) startBy(op imageops.Op, deadline time.Time) time.Time {
	slack := min(s.cfg.RequestTimeout/slackShare, slackMost)
	own, ok := s.pace.Own(op)
	if !ok {
		own = slack
	}
	// Never before half its time: a call that finds a worker idle is run
	// even when the pace says it would not finish, which is how a pace
	// seen under load learns that the load has gone.
	return deadline.Add(-min(own+slack, s.cfg.RequestTimeout/2))
}

// seedPace gives this process's pace, while it has seen no task of op,
// the pace the workers published (jobs.SeedPace): read at most once every
// seedEvery, within seedWait, so that a burst on a process just started
// reads Redis once and a Redis that does not answer costs a call little.
func (s *Server) seedPace(ctx context.Context, op imageops.Op) {
	if s.pace.Seeded(op) {
		return
	}
	now := time.Now().UnixNano()
	last := s.seeded.Load()
	if now-last < int64(seedEvery) || !s.seeded.CompareAndSwap(last, now) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, seedWait)
	defer cancel()
	jobs.SeedPace(ctx, s.rdb, &s.pace)
}

const (
	seedEvery = time.Second
	seedWait  = 250 * time.Millisecond
)

// queueLoad is the photo queue's load now. The queue's length is read
// for every call (a burst's calls see the tasks of the one before it leave
// as they do: a snapshot kept even a quarter second can hold tasks a
// worker is about to withdraw unrun, and refuse a whole burst with the
// workers about to idle); the workers' concurrency, from heartbeats
// written every 5 s, is kept for workersFresh.
func (s *Server) queueLoad(ctx context.Context) (jobs.Load, error) {
	l, err := s.jobs.Queued(ctx)
	if err != nil {
		return jobs.Load{}, err
	}
	l.Concurrency, err = s.workers.get(s.jobs)
	return l, err
}

// workersCache keeps the workers' concurrency for workersFresh, so that a
// burst of arrivals reads the workers' heartbeats once.
type workersCache struct {
	mu          sync.Mutex
	at          time.Time
	concurrency int
}

const workersFresh = time.Second

func (w *workersCache) get(c *jobs.Client) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.at) < workersFresh {
		return w.concurrency, nil
	}
	n, err := c.Concurrency()
	if err != nil {
		return 0, err
	}
	w.at, w.concurrency = time.Now(), n
	return n, nil
}

// expectedWait is how long a call arriving now should wait for a worker:
// the tasks queued and running, and the calls this process admitted that
// are not queued yet (its keys' waiting lines among them), at the workers'
// recent pace. ok false when it cannot be told (no pace seen yet, no
// worker listed, Redis not answering): the call is then admitted, and its
// start-by time still guards it.
func (s *Server) expectedWait(ctx context.Context) (wait time.Duration, ahead int64, ok bool) {
	mean := s.pace.Mean()
	if mean <= 0 {
		return 0, 0, false
	}
	l, err := s.queueLoad(ctx)
	if err != nil || l.Concurrency <= 0 {
		return 0, 0, false
	}
	ahead = l.Pending + l.Active + s.preQueue.Load()
	return waitBehind(ahead, l.Concurrency, mean), ahead, true
}

// waitBehind is the wait for a worker behind ahead tasks on workers that
// run concurrency at once, each taking mean: it starts once all but
// concurrency-1 of them have finished.
func waitBehind(ahead int64, concurrency int, mean time.Duration) time.Duration {
	behind := max(ahead-int64(concurrency)+1, 0)
	return time.Duration(behind) * mean / time.Duration(concurrency)
}

// admit answers a call of op arriving now, with this deadline, 503 when
// the wait for a worker and its own processing would outlast its
// deadline. Admitted, it counts in preQueue until leave is called (once
// its task is queued, or it ended).
func (s *Server) admit(ctx context.Context, c echo.Context, op imageops.Op, deadline time.Time) (leave func(), err error) {
	s.seedPace(ctx, op)
	// With nothing ahead of it, it is admitted even when the pace says it
	// would not finish: alone on the workers it runs faster than the pace
	// seen under load, and that is how the pace learns the load has gone.
	if own, ok := s.pace.Own(op); ok {
		wait, ahead, ok := s.expectedWait(ctx)
		if left := time.Until(deadline); ok && ahead > 0 && wait+own > left {
			return nil, s.overloaded(c, overloadRefused, max(wait, own-left))
		}
	}
	s.preQueue.Add(1)
	var once sync.Once
	return func() { once.Do(func() { s.preQueue.Add(-1) }) }, nil
}

// overloaded is the 503 of a call refused or withdrawn at stage because
// the workers could not start it in time, with Retry-After the wait
// expected for a worker (at least a second).
func (s *Server) overloaded(c echo.Context, stage string, wait time.Duration) error {
	if stage != overloadRefused {
		// The tasks being worked on: those queued are withdrawn as it is,
		// at about the same time, when they arrived with it.
		if l, err := s.queueLoad(c.Request().Context()); err == nil && l.Concurrency > 0 {
			wait = waitBehind(l.Active, l.Concurrency, s.pace.Mean())
		}
	}
	retry := max(int64(math.Ceil(wait.Seconds())), 1)
	c.Response().Header().Set("Retry-After", strconv.FormatInt(retry, 10))
	c.Set(ctxOverload, stage)
	if stage == overloadOverran {
		return carphoto.Errorf(carphoto.EUnavailable,
			"processing started but the workers, busier than their recent pace, could not finish it within %v; you were not charged, retry after Retry-After (%d s)",
			s.cfg.RequestTimeout, retry)
	}
	return carphoto.Errorf(carphoto.EUnavailable,
		"the workers are too busy for this call to finish within %v (about %d s of work is queued ahead of it), so it was not started; you were not charged, retry after Retry-After",
		s.cfg.RequestTimeout, retry)
}
