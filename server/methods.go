package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"carphoto"
)

// HTTP as clients and their tools expect it: HEAD wherever GET is, Allow
// on every 405, a Bearer challenge on the API's 401, and JSON for the
// statuses net/http writes itself (412, 416).

// getter is what routes are registered on: the server, or a group.
type getter interface {
	GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	HEAD(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
}

// get registers h for GET and HEAD on path: net/http sends a HEAD answer's
// status and headers and drops its body.
func get(g getter, path string, h echo.HandlerFunc) {
	g.GET(path, h)
	g.HEAD(path, h)
}

// allowMethods are the methods allowed looks for, in the order Allow lists them.
var allowMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete}

// allowed lists the methods the routes serve on path ("GET, HEAD"), the
// catch-all under /v1 left out, for the Allow header of a 405; "" when no
// route serves it.
func (s *Server) allowed(path string) string {
	s.servedOnce.Do(func() {
		s.served = map[string]bool{}
		for _, r := range s.e.Routes() {
			s.served[r.Method+" "+r.Path] = true
		}
	})
	c := s.e.NewContext(nil, nil)
	var methods []string
	for _, m := range allowMethods {
		s.e.Router().Find(m, path, c)
		if p := c.Path(); p != "/v1/*" && s.served[m+" "+p] {
			methods = append(methods, m)
		}
	}
	return strings.Join(methods, ", ")
}

// methodsOr answers a request for a path the routes serve with other
// methods: 405 with Allow naming those, whoever asks (before any key or
// token is checked), or 204 with Allow to a plain OPTIONS. A path no
// route serves goes on to next.
func (s *Server) methodsOr(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		allow := s.allowed(r.URL.Path)
		if allow == "" {
			return next(c)
		}
		c.Response().Header().Set(echo.HeaderAllow, allow)
		if r.Method == http.MethodOptions {
			return c.NoContent(http.StatusNoContent)
		}
		return carphoto.Errorf(carphoto.EMethodNotAllowed, "method %s is not allowed on %s; it takes %s", r.Method, r.URL.Path, allow)
	}
}

// challenge is the WWW-Authenticate an API 401 carries (RFC 6750).
const challenge = `Bearer realm="carphoto"`

// challenged sets WWW-Authenticate on a 401 of the API (/v1), where a
// Bearer key is what is asked for; the admin API asks for its token the
// same way, the dashboard sets its own Basic challenge.
func challenged(c echo.Context, status int) {
	h := c.Response().Header()
	if status != http.StatusUnauthorized || h.Get(echo.HeaderWWWAuthenticate) != "" {
		return
	}
	if p := c.Request().URL.Path; strings.HasPrefix(p, "/v1/") || p == "/admin/v1" || strings.HasPrefix(p, "/admin/v1/") || p == "/metrics" {
		h.Set(echo.HeaderWWWAuthenticate, challenge)
	}
}

// contentRefusal is a ResponseWriter for http.ServeContent that holds
// back the refusals it writes itself, in plain text or with no body (412
// for an If-Match or If-Unmodified-Since that does not hold, 416 for a
// Range past the end or malformed), so that they are answered as every
// failure is (handleError); anything else (200, 206, 304) passes as is.
type contentRefusal struct {
	http.ResponseWriter
	size    int64  // the content's bytes, for a 416's Content-Range
	ranges  string // the request's Range, for a 416's message
	refused int    // the status held back, 0 when none
}

func (w *contentRefusal) WriteHeader(status int) {
	if status >= http.StatusBadRequest {
		w.refused = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *contentRefusal) Write(b []byte) (int, error) {
	if w.refused != 0 {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *contentRefusal) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// err is the refusal held back, nil when there was none. A 416 says the
// content's size in Content-Range (bytes */size), as RFC 9110 asks.
func (w *contentRefusal) err() error {
	if w.refused == 0 {
		return nil
	}
	h := w.Header()
	for _, k := range []string{echo.HeaderContentType, echo.HeaderContentLength, echo.HeaderContentDisposition, "X-Content-Type-Options"} {
		h.Del(k) // the content's, or http.Error's text/plain
	}
	switch w.refused {
	case http.StatusRequestedRangeNotSatisfiable:
		h.Set("Content-Range", fmt.Sprintf("bytes */%d", w.size))
		return carphoto.Errorf(carphoto.ERangeNotSatisfiable,
			"the Range %s cannot be served from the result's %d bytes (Content-Range: bytes */%d): ask for bytes within it, as bytes=0-1048575, or send no Range",
			echoed(w.ranges), w.size, w.size)
	case http.StatusPreconditionFailed:
		return carphoto.Errorf(carphoto.EPreconditionFailed,
			"the result does not meet If-Match or If-Unmodified-Since: it was last modified %s; send the condition it meets, or none", h.Get(echo.HeaderLastModified))
	}
	return carphoto.Errorf(carphoto.EInternal, "the result could not be sent (%d)", w.refused)
}
