package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// Cross-origin access (CORS) for browsers. The public documents (the
// OpenAPI document, the reference page and its script) are readable from
// any origin: they hold nothing an origin could abuse. The API (/v1) is
// open to the origins in Config.CORSOrigins only, none by default: a page
// that calls it holds an API key, and an operator decides which sites may.
// Preflights (OPTIONS) are answered here, before authentication: they
// carry no key, count against no key's rate and no address's failed
// authentications.

// publicPaths are the documents any origin may read.
var publicPaths = []string{"/v1/openapi.json", "/docs", "/docs/redoc.standalone.js"}

// headerClientRequestID is where a client's own X-Request-Id comes back.
const headerClientRequestID = "X-Client-Request-Id"

// exposedHeaders are the API's headers a page on an allowed origin may read
// beyond the CORS-safelisted ones: what a call cost and left, its ids, its
// rate, its outcome, and what a refusal or a range says. Every header
// openapi.json lists on a /v1 answer is here (TestCORSExposesDocumentedHeaders).
var exposedHeaders = []string{
	"X-Credits-Charged", "X-Credits-Remaining",
	echo.HeaderXRequestID, headerClientRequestID,
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", echo.HeaderRetryAfter,
	"X-Plates-Found", headerPlatesDesigned, headerCarTruncated, headerCarOccluded, headerCarScale, headerColorProfile,
	"Idempotent-Replayed", echo.HeaderLocation, echo.HeaderContentDisposition, "Server-Timing",
	echo.HeaderAllow, echo.HeaderWWWAuthenticate, "Accept-Ranges", "Content-Range",
}

// cors returns the two CORS policies, public documents first.
func (s *Server) cors() []echo.MiddlewareFunc {
	public := func(c echo.Context) bool { return slices.Contains(publicPaths, c.Request().URL.Path) }
	origins := s.cfg.CORSOrigins
	return []echo.MiddlewareFunc{
		middleware.CORSWithConfig(middleware.CORSConfig{
			Skipper:       func(c echo.Context) bool { return !public(c) },
			AllowOrigins:  []string{"*"},
			AllowMethods:  []string{http.MethodGet, http.MethodHead},
			ExposeHeaders: []string{echo.HeaderXRequestID},
			MaxAge:        86400,
		}),
		middleware.CORSWithConfig(middleware.CORSConfig{
			Skipper: func(c echo.Context) bool {
				return public(c) || !strings.HasPrefix(c.Request().URL.Path, "/v1/")
			},
			// An exact match, scheme and port included: no patterns, no "*".
			AllowOriginFunc: func(origin string) (bool, error) { return slices.Contains(origins, origin), nil },
			AllowMethods:    []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete},
			AllowHeaders: []string{echo.HeaderAuthorization, echo.HeaderContentType, echo.HeaderAccept,
				headerIdempotencyKey, echo.HeaderXRequestID},
			ExposeHeaders: exposedHeaders,
			MaxAge:        600,
		}),
	}
}
