package server

// PLACEHOLDER (the billing engineer replaces this file): authentication,
// rate limiting and the billing routes.

import (
	"github.com/labstack/echo/v4"
)

// ctxAccountID holds the authenticated account's id.
const ctxAccountID = "carphoto.account_id"

// authenticate resolves the bearer key to an account (401 invalid_api_key).
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error { return next(c) }
}

// rateLimit applies the per-key limit (429 rate_limited) and sets the
// X-RateLimit-* headers on every /v1 response.
func (s *Server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error { return next(c) }
}

// accountID returns the authenticated account's id, "" before authenticate.
func accountID(c echo.Context) string {
	id, _ := c.Get(ctxAccountID).(string)
	return id
}

// billingRoutes adds /v1/account, /v1/assets and the admin API.
func (s *Server) billingRoutes(v1, admin *echo.Group) {}
