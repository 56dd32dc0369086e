package server

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"

	"github.com/labstack/echo/v4"

	"carphoto"
)

// clientOf names the client of r for the budget of failed
// authentications: its IP address, and for IPv6 its /64 (one host or
// site commonly holds a whole /64, and would otherwise get a new budget
// per address). It is the TCP peer: behind a reverse proxy, every client
// of the proxy shares its budget (only failures count, so callers with a
// valid key are never held up by it).
func clientOf(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return "unknown"
	}
	ip := ap.Addr().Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// authFailed counts a failed authentication (err, a 401) against the
// client's budget (AUTH_FAILURES_PER_MINUTE) and returns err while within
// it, 429 rate_limited with Retry-After past it. Should Redis not answer,
// err stands: a 401 is not made a 503.
func (s *Server) authFailed(c echo.Context, err error) error {
	if carphoto.ErrorCode(err) != carphoto.EInvalidAPIKey {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), settleGrace)
	defer cancel()
	rl, rerr := s.billing.AuthFailed(ctx, clientOf(c.Request()))
	if rerr != nil || rl.Allowed {
		return err
	}
	return s.tooManyFailures(c, rl.Limit, rl.RetryAfter.Seconds())
}

// authBlocked refuses, before a secret is compared, a client that has
// used up its failed authentications: past the budget it cannot try
// admin tokens at all until the budget refills.
func (s *Server) authBlocked(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), settleGrace)
	defer cancel()
	rl, err := s.billing.AuthBlocked(ctx, clientOf(c.Request()))
	if err != nil || rl.Allowed {
		return nil
	}
	return s.tooManyFailures(c, rl.Limit, rl.RetryAfter.Seconds())
}

func (s *Server) tooManyFailures(c echo.Context, limit int, retryAfter float64) error {
	retry := max(int64(retryAfter+0.999), 1)
	c.Response().Header().Set("Retry-After", strconv.FormatInt(retry, 10))
	return carphoto.Errorf(carphoto.ERateLimited,
		"more than %d failed authentications (missing or wrong API key or token) per minute from your address; retry in %d s", limit, retry)
}
