package billing

import (
	"context"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// RateLimit is the state of one key's request budget after a request.
type RateLimit struct {
	Allowed   bool
	Limit     int // requests per minute
	Remaining int // requests that could be made at once right now
	// ResetAfter is the time until the budget is full again (Remaining ==
	// Limit); RetryAfter, when not Allowed, the time until the next request
	// can be allowed.
	ResetAfter time.Duration
	RetryAfter time.Duration
}

// Allow counts one request against the key named keyID (Account.KeyID) and
// reports whether it may proceed. The limit is GCRA (redis_rate): a burst of
// RateLimitPerMinute, then one request every minute/RateLimitPerMinute.
func (s *Service) Allow(ctx context.Context, keyID string) (RateLimit, error) {
	return s.allow(ctx, prefix+keyID, s.cfg.RateLimitPerMinute)
}

// adminBucket is the admin API's one budget: the admin token is one caller.
const adminBucket = prefix + "admin"

// AllowAdmin counts one admin API call against AdminRateLimitPerMinute
// (GCRA, like Allow), shared by every process and caller with the token.
func (s *Service) AllowAdmin(ctx context.Context) (RateLimit, error) {
	return s.allow(ctx, adminBucket, s.cfg.AdminRateLimitPerMinute)
}

// AuthFailed counts one failed authentication (a missing or wrong API key
// or admin token) of client, an address (see the server's clientOf),
// against AuthFailuresPerMinute (GCRA, like Allow). Not Allowed, the
// client has failed too often and should be told to wait RetryAfter.
func (s *Service) AuthFailed(ctx context.Context, client string) (RateLimit, error) {
	return s.allow(ctx, authFailBucket(client), s.cfg.AuthFailuresPerMinute)
}

// AuthBlocked reports, without counting anything, whether client has
// used up its failed authentications: then it should not be let to try a
// secret at all (the admin token) until RetryAfter.
func (s *Service) AuthBlocked(ctx context.Context, client string) (RateLimit, error) {
	limit := redis_rate.PerMinute(s.cfg.AuthFailuresPerMinute)
	var r *redis_rate.Result
	err := rideThrough(ctx, func(ctx context.Context) (err error) {
		r, err = s.limiter.AllowN(ctx, authFailBucket(client), limit, 0)
		return err
	})
	if err != nil {
		return RateLimit{}, storeErr("rate limit", err)
	}
	// A cost of 0 counts nothing; one more failure fits while a whole
	// request remains.
	rl := RateLimit{Allowed: r.Remaining >= 1, Limit: limit.Rate, Remaining: r.Remaining, ResetAfter: max(r.ResetAfter, 0)}
	if !rl.Allowed {
		rl.RetryAfter = max(r.RetryAfter, limit.Period/time.Duration(limit.Rate))
	}
	return rl, nil
}

func authFailBucket(client string) string { return prefix + "authfail:" + client }

func (s *Service) allow(ctx context.Context, bucket string, perMinute int) (RateLimit, error) {
	limit := redis_rate.PerMinute(perMinute)
	var r *redis_rate.Result
	err := rideThrough(ctx, func(ctx context.Context) (err error) {
		r, err = s.limiter.Allow(ctx, bucket, limit)
		return err
	})
	if err != nil {
		return RateLimit{}, storeErr("rate limit", err)
	}
	rl := RateLimit{
		Allowed:    r.Allowed > 0,
		Limit:      limit.Rate,
		Remaining:  r.Remaining,
		ResetAfter: max(r.ResetAfter, 0),
	}
	if !rl.Allowed {
		rl.RetryAfter = max(r.RetryAfter, 0)
	}
	return rl, nil
}
