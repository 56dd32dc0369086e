package billing

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"carphoto"
)

// ErrInFlightLimit is the cause inside the ERateLimited error Enter returns
// when the key already has MaxInFlightPerKey photo requests running.
var ErrInFlightLimit = errors.New("billing: too many photo requests in flight for this key")

// InFlight is one photo request counted against its key's concurrency cap.
// Pass it to Leave when the request ends; the zero InFlight counts nothing.
type InFlight struct {
	key, member string
}

// enterScript admits one more request for a key while fewer than the cap
// are in flight. Each request is a member of a sorted set scored by its own
// expiry, so one left by a web process that died stops counting at that
// time, without any sweeper. KEYS[1] cp:inflight:{key_id}; ARGV: request
// id, now (ms), expires at (ms), cap, set TTL (ms). It returns {1, count}
// when admitted, {0, count} when the key is at its cap.
var enterScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[4]) then return {0, n} end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1, n + 1}
`)

// Enter counts the photo request requestID against the cap of concurrent
// photo requests of the key named keyID (Account.KeyID), across every web
// process sharing the Redis. Over the cap it returns an ERateLimited error
// wrapping ErrInFlightLimit. The count lasts until Leave, or InFlightTTL at
// most.
func (s *Service) Enter(ctx context.Context, keyID, requestID string) (InFlight, error) {
	f := InFlight{key: inflightKey(keyID), member: requestID}
	now := s.now()
	ttl := s.cfg.InFlightTTL
	v, err := enterScript.Run(ctx, s.rdb, []string{f.key},
		requestID, unixMS(now), unixMS(now.Add(ttl)), s.cfg.MaxInFlightPerKey, ttl.Milliseconds(),
	).Int64Slice()
	if err != nil {
		return InFlight{}, storeErr("count requests in flight", err)
	}
	if v[0] == 0 {
		n := int64(s.cfg.MaxInFlightPerKey)
		return InFlight{}, carphoto.Wrap(ErrInFlightLimit, carphoto.ERateLimited, fmt.Sprintf(
			"this API key already has %d %s in flight, its limit; retry when one has finished", n, plural(n, "photo request")))
	}
	return f, nil
}

// Leave ends the request's count. It is safe to call more than once and on
// the zero InFlight, so it can be deferred right after Enter.
func (s *Service) Leave(ctx context.Context, f InFlight) error {
	if f.key == "" {
		return nil
	}
	if err := s.rdb.ZRem(ctx, f.key, f.member).Err(); err != nil {
		return storeErr("end request in flight", err)
	}
	return nil
}

func inflightKey(keyID string) string { return prefix + "inflight:" + keyID }
