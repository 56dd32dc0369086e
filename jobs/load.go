package jobs

import (
	"context"

	"carphoto"
)

// Load is what the photo queue holds at one moment: the tasks waiting for
// a worker, those being worked on (Queued), and how many the workers
// serving the queue run at once (their Asynq concurrency, summed:
// Concurrency).
type Load struct {
	Pending, Active int64
	Concurrency     int
}

// Queued reads the photo queue's length from Asynq's own lists: one round
// trip, a cheap LLEN each (unlike the Inspector's queue statistics), cheap
// enough to read for every call that arrives. Concurrency is left zero.
func (c *Client) Queued(ctx context.Context) (Load, error) {
	pipe := c.rdb.Pipeline()
	pending := pipe.LLen(ctx, "asynq:{"+Queue+"}:pending")
	active := pipe.LLen(ctx, "asynq:{"+Queue+"}:active")
	if _, err := pipe.Exec(ctx); err != nil {
		return Load{}, err
	}
	return Load{Pending: pending.Val(), Active: active.Val()}, nil
}

// Concurrency is how many tasks the workers serving the photo queue run at
// once, from their Asynq heartbeats (written every 5 s, so worth caching
// for a second: the Inspector reads every server's record).
func (c *Client) Concurrency() (int, error) {
	servers, err := c.ins.Servers()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range servers {
		if _, ok := s.Queues[Queue]; ok && s.Status == "active" {
			n += s.Concurrency
		}
	}
	return n, nil
}

// Withdrawn is the result a worker hands back for a task it took up after
// its StartBy: it was not run, because it could no longer finish by its
// deadline. The web side answers it 503, uncharged, as it answers a task
// it withdrew from the queue itself (ErrWithdrawn).
func Withdrawn() *Result {
	return &Result{Code: carphoto.EUnavailable, Message: "the workers were too busy for this call to finish within its deadline, so it was not started; you were not charged, retry after Retry-After"}
}

// Overran is the result a worker hands back for a task it started in time
// whose processing its deadline cut short: the machine, busier than the
// workers' recent pace said, slowed it. The web side answers it 503 as
// overload, uncharged, as it answers a task it saw overrun (OverranError).
func Overran() *Result {
	return &Result{Code: carphoto.EUnavailable, Overran: true, Message: "processing started but the workers, busier than their recent pace, could not finish it within its deadline; you were not charged, retry after Retry-After"}
}
