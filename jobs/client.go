package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"carphoto"
)

// Request is one photo to process, as the web process hands it over.
type Request struct {
	ID        string
	Op        string
	AccountID string
	Photo     []byte
	Logo      []byte // plate-logo's design; nil otherwise
	Params    Params
	Deadline  time.Time
}

// Client enqueues requests and waits for their results.
type Client struct {
	rdb redis.UniversalClient
	aq  *asynq.Client
}

// NewClient returns a Client on rdb. Every waiting request holds one of
// rdb's pooled connections in BLPOP: size the pool above the concurrency.
func NewClient(rdb redis.UniversalClient) *Client {
	return &Client{rdb: rdb, aq: asynq.NewClientFromRedisClient(rdb)}
}

// ErrTimeout is returned by Do when no result arrived before the deadline.
var ErrTimeout = errors.New("no result before the deadline")

// Do stores the inputs, enqueues the task and blocks until a worker answers,
// the deadline passes (ErrTimeout) or ctx is done. The inputs are removed
// before Do returns, whatever happened.
func (c *Client) Do(ctx context.Context, req Request) (*Result, error) {
	ttl := time.Until(req.Deadline) + 5*time.Second
	if ttl <= 5*time.Second {
		return nil, ErrTimeout
	}
	p := Payload{
		RequestID: req.ID, Op: req.Op, AccountID: req.AccountID, HasLogo: req.Logo != nil,
		Params: req.Params, EnqueuedAt: time.Now(), Deadline: req.Deadline,
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	photoKey, logoKey, resultKey := PhotoKey(req.ID), LogoKey(req.ID), ResultKey(req.ID)
	// Deleting inputs on the way out makes a late worker find nothing to do.
	defer c.rdb.Del(context.WithoutCancel(ctx), photoKey, logoKey)

	pipe := c.rdb.Pipeline()
	pipe.Set(ctx, photoKey, req.Photo, ttl)
	if req.Logo != nil {
		pipe.Set(ctx, logoKey, req.Logo, ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("store inputs: %w", err)
	}
	task := asynq.NewTask(TaskType(req.Op), body,
		asynq.Queue(Queue), asynq.Deadline(req.Deadline), asynq.MaxRetry(0), asynq.TaskID(req.ID))
	if _, err := c.aq.EnqueueContext(ctx, task); err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}

	wait := time.Until(req.Deadline)
	if wait <= 0 {
		return nil, ErrTimeout
	}
	// BLPOP has a resolution of milliseconds; go-redis adds the timeout to
	// the connection's read deadline for blocking commands.
	vals, err := c.rdb.BLPop(ctx, wait, resultKey).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, ErrTimeout
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, fmt.Errorf("wait for result: %w", err)
	}
	return DecodeResult([]byte(vals[1]))
}

// Close releases the Asynq client; the Redis client belongs to the caller.
func (c *Client) Close() error { return c.aq.Close() }

// LoadInputs returns a task's photo and logo. A missing photo means the
// request is gone (finished, timed out or its inputs expired): there is
// nobody to answer, and the caller should drop the task.
func LoadInputs(ctx context.Context, rdb redis.UniversalClient, p Payload) (photo, logo []byte, err error) {
	pipe := rdb.Pipeline()
	ph := pipe.Get(ctx, PhotoKey(p.RequestID))
	var lg *redis.StringCmd
	if p.HasLogo {
		lg = pipe.Get(ctx, LogoKey(p.RequestID))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, fmt.Errorf("load inputs: %w", err)
	}
	photo, err = ph.Bytes()
	if err != nil {
		return nil, nil, ErrGone
	}
	if lg != nil {
		if logo, err = lg.Bytes(); err != nil {
			return nil, nil, ErrGone
		}
	}
	return photo, logo, nil
}

// ErrGone means the request a task belongs to no longer waits for it.
var ErrGone = carphoto.Errorf(carphoto.EProcessingFailed, "the request is gone")

// Deliver hands a result to the waiting request. The list expires shortly
// after the deadline, so a result nobody reads does not stay in Redis.
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
	pipe := rdb.TxPipeline()
	pipe.RPush(ctx, key, frame)
	pipe.Expire(ctx, key, ttl)
	_, err = pipe.Exec(ctx)
	return err
}
