package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"carphoto"
	"carphoto/billing"
)

// Context keys of the authenticated caller.
const (
	ctxAccountID = "carphoto.account_id"
	ctxAccount   = "carphoto.account"
	ctxRateLimit = "carphoto.rate_limit"
)

// authenticate resolves the bearer key to an account, or refuses the
// request with 401 invalid_api_key before anything else on /v1 runs (429
// rate_limited once its address has failed AUTH_FAILURES_PER_MINUTE
// times). The key itself is never logged: the request's log lines carry
// its key_id.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		a, err := s.account(c)
		if err != nil {
			return s.authFailed(c, err)
		}
		c.Set(ctxAccountID, a.ID)
		c.Set(ctxAccount, a)
		l := logFor(c).With().Str("key_id", a.KeyID).Logger()
		c.Set(ctxLogger, &l)
		return next(c)
	}
}

// account is the account of the request's bearer key.
func (s *Server) account(c echo.Context) (a billing.Account, err error) {
	key, err := bearer(c.Request())
	if err != nil {
		return a, err
	}
	ctx, cancel := s.redisDeadline(c)
	defer cancel()
	return s.billing.Authenticate(ctx, key)
}

// bearer returns the token of an "Authorization: Bearer <token>" header;
// "" when there is no header (billing.Authenticate explains that case).
func bearer(r *http.Request) (string, error) {
	h := r.Header.Get(echo.HeaderAuthorization)
	if h == "" {
		return "", nil
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", carphoto.Errorf(carphoto.EInvalidAPIKey, "the Authorization header must be \"Bearer <API_KEY>\"")
	}
	return strings.TrimSpace(token), nil
}

// rateLimit counts the request against its key's per-minute budget and
// sets X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset
// (whole seconds until the budget is full again) on every authenticated /v1
// response. Over the budget it answers 429 rate_limited with Retry-After.
func (s *Server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		a, _ := c.Get(ctxAccount).(billing.Account)
		ctx, cancel := s.redisDeadline(c)
		defer cancel()
		rl, err := s.billing.Allow(ctx, a.KeyID)
		if err != nil {
			return err
		}
		c.Set(ctxRateLimit, rl)
		h := c.Response().Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(rl.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(rl.Remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(ceilSeconds(rl.ResetAfter), 10))
		if !rl.Allowed {
			retry := max(ceilSeconds(rl.RetryAfter), 1)
			h.Set("Retry-After", strconv.FormatInt(retry, 10))
			return carphoto.Errorf(carphoto.ERateLimited,
				"more than %d requests per minute with this API key; retry in %d s", rl.Limit, retry)
		}
		return next(c)
	}
}

// redisDeadline bounds the Redis steps in front of a request (the key, the
// rate) by its deadline, REQUEST_TIMEOUT from its arrival: they are tried
// again while Redis is out of reach (billing does), so a restart of a few
// seconds costs the call time, not its answer.
func (s *Server) redisDeadline(c echo.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadline(c.Request().Context(), requestStart(c).Add(s.cfg.RequestTimeout))
}

// ceilSeconds rounds d up to whole seconds, as the rate-limit headers need.
func ceilSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}

// accountID returns the authenticated account's id, "" before authenticate.
func accountID(c echo.Context) string {
	id, _ := c.Get(ctxAccountID).(string)
	return id
}
