package billing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto/internal/redisha"
)

// ErrInFlightWait is the cause of the error Enter returns when its context
// ends while the request still waits for one of its key's slots.
var ErrInFlightWait = errors.New("billing: still waiting for a slot of this key")

// InFlight is one photo request counted against its key's concurrency cap.
// Pass it to Leave when the request ends; the zero InFlight counts nothing.
type InFlight struct {
	keyID, member string
}

// A waiting request looks at the queue again when a slot of its key frees
// (woken through Redis pub/sub on wakeChannel, from any web process), else
// at least every waitPollMost; each look renews its ticket's lease. A
// ticket whose lease lapses (its web process died) leaves the queue, so it
// cannot hold up those behind it.
const (
	waitPollFirst = 5 * time.Millisecond
	waitPollMost  = 250 * time.Millisecond
	ticketLease   = 5 * time.Second
	wakeChannel   = prefix + "inwake"
)

// enterScript admits a request to one of its key's MaxInFlightPerKey slots
// in arrival order, across web processes. The slots are a sorted set of
// requests scored by their own expiry, so a slot left by a web process
// that died frees at that time without any sweeper. Waiting requests hold
// a ticket: a sorted set scored by arrival (a counter), with a second one
// holding each ticket's lease. A request enters when fewer of the tickets
// ahead of it than the free slots: so a later request never passes an
// earlier one.
//
// KEYS: slots, queue, leases, counter. ARGV: request id, now (ms), slot
// expiry (ms), cap, keys' TTL (ms), lease expiry (ms). It returns {1, 0}
// when admitted (also when it already was), {0, position} when waiting,
// position 1 being next.
var enterScript = redis.NewScript(`
local function keep()
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[2])
for _, m in ipairs(lapsed) do
  redis.call('ZREM', KEYS[2], m)
  redis.call('ZREM', KEYS[3], m)
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {1, 0} end
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ARGV[1])
end
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[1])
local free = tonumber(ARGV[4]) - redis.call('ZCARD', KEYS[1])
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
if rank < free then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  keep()
  return {1, 0}
end
keep()
return {0, rank - math.max(free, 0) + 1}
`)

// Enter takes one of the MaxInFlightPerKey slots of the key named keyID
// (Account.KeyID) for the request requestID, across every web process
// sharing the Redis. When they are all taken it waits, in arrival order
// behind the key's earlier requests, until one frees or ctx ends; then it
// returns an error wrapping ErrInFlightWait and ctx's error, and the
// request leaves the queue. The slot lasts until Leave, or InFlightTTL at
// most. While Redis is out of reach it keeps trying (the request keeps its
// place while its ticket's lease runs); if Redis is still out of reach
// when ctx ends, that error is returned (EUnavailable), not ctx's.
func (s *Service) Enter(ctx context.Context, keyID, requestID string) (InFlight, error) {
	f := InFlight{keyID: keyID, member: requestID}
	keys := []string{inflightKey(keyID), queueKey(keyID), leaseKey(keyID), seqKey(keyID)}
	poll := waitPollFirst
	var down error // the last try's error while Redis is out of reach
	s.listenWakes()
	for {
		wake := s.waiters.wait(keyID)
		now := s.now()
		ttl := s.cfg.InFlightTTL
		v, err := enterScript.Run(ctx, s.rdb, keys, requestID, unixMS(now), unixMS(now.Add(ttl)),
			s.cfg.MaxInFlightPerKey, ttl.Milliseconds(), unixMS(now.Add(ticketLease))).Int64Slice()
		switch {
		case redisha.Transient(err):
			down = err
		case err == nil:
			down = nil
		}
		switch {
		case ctx.Err() != nil && down != nil:
			s.leaveQueue(ctx, f)
			return InFlight{}, storeErr("take a slot of the key", down)
		case ctx.Err() != nil:
			s.leaveQueue(ctx, f)
			return InFlight{}, fmt.Errorf("%w: %w", ErrInFlightWait, ctx.Err())
		case err != nil && !redisha.Transient(err):
			return InFlight{}, storeErr("take a slot of the key", err)
		case err == nil && v[0] == 1:
			return f, nil
		}
		// A slot freed in this process wakes its waiters at once; one freed
		// in another is seen at the next look.
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
		case <-wake:
		case <-t.C:
		}
		t.Stop()
		poll = min(2*poll, waitPollMost)
	}
}

// leaveQueue takes a request that gave up waiting out of the queue, and
// out of the slots should the script have let it in as ctx ended.
func (s *Service) leaveQueue(ctx context.Context, f InFlight) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	// The key's sets share a slot, so they change in one transaction; the
	// wake-up is published apart (a channel has no slot).
	pipe := s.rdb.TxPipeline()
	pipe.ZRem(ctx, queueKey(f.keyID), f.member)
	pipe.ZRem(ctx, leaseKey(f.keyID), f.member)
	pipe.ZRem(ctx, inflightKey(f.keyID), f.member)
	_, err := redisha.Exec(ctx, pipe)
	if err == nil {
		err = s.rdb.Publish(ctx, wakeChannel, f.keyID).Err()
	}
	if err != nil {
		// The ticket's lease lapses on its own, and the slot with it.
		s.cfg.Log.Warn().Err(err).Str("request", f.member).Msg("leave the queue of the key")
	}
	s.waiters.wake(f.keyID)
}

// Leave ends the request's slot. It is safe to call more than once and on
// the zero InFlight, so it can be deferred right after Enter.
func (s *Service) Leave(ctx context.Context, f InFlight) error {
	if f.keyID == "" {
		return nil
	}
	defer s.waiters.wake(f.keyID)
	err := rideThrough(ctx, func(ctx context.Context) error {
		pipe := s.rdb.Pipeline()
		pipe.ZRem(ctx, inflightKey(f.keyID), f.member)
		pipe.Publish(ctx, wakeChannel, f.keyID) // the key's waiters in other processes
		_, err := pipe.Exec(ctx)
		return err
	})
	if err != nil {
		return storeErr("end request in flight", err)
	}
	return nil
}

// listenWakes starts, once per Service, the subscription that wakes this
// process's waiting requests when a slot of their key frees in any
// process. It ends when the Redis client is closed; while Redis is out of
// reach the waiters poll.
func (s *Service) listenWakes() {
	s.wakeOnce.Do(func() {
		ps := s.rdb.Subscribe(context.Background(), wakeChannel)
		go func() {
			defer ps.Close()
			for {
				msg, err := ps.ReceiveMessage(context.Background())
				switch {
				case errors.Is(err, redis.ErrClosed):
					return
				case err != nil:
					time.Sleep(waitPollMost) // go-redis reconnects on the next receive
				default:
					s.waiters.wake(msg.Payload)
				}
			}
		}()
	})
}

// A key's waiting queue shares the hash tag {key_id}: enterScript runs on
// one slot of a Redis Cluster.
func inflightKey(keyID string) string { return prefix + "inflight:{" + keyID + "}" }
func queueKey(keyID string) string    { return prefix + "inqueue:{" + keyID + "}" }
func leaseKey(keyID string) string    { return prefix + "inlease:{" + keyID + "}" }
func seqKey(keyID string) string      { return prefix + "inseq:{" + keyID + "}" }

// waiters wakes this process's requests waiting on a key when one of its
// requests leaves, so a slot freed here is taken without waiting out a
// poll.
type waiters struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

// wait returns a channel closed at the next wake of keyID.
func (w *waiters) wait(keyID string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = map[string]chan struct{}{}
	}
	c, ok := w.ch[keyID]
	if !ok {
		c = make(chan struct{})
		w.ch[keyID] = c
	}
	return c
}

func (w *waiters) wake(keyID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.ch[keyID]; ok {
		close(c)
		delete(w.ch, keyID)
	}
}
