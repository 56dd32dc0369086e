package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"carphoto"
	"carphoto/imageops"
	"carphoto/metrics"
)

// photoPaths are the routes of the photo operations.
var photoPaths = func() map[string]bool {
	m := map[string]bool{}
	for _, op := range imageops.Ops {
		m["/v1/"+string(op)] = true
	}
	return m
}()

// observe records every request in the metrics once it is answered: it
// sits outside accessLog, which has written any error by then. What a photo
// request learnt (queue wait, processing, plates, credits) comes from the
// context and headers the handler set, so handlers know nothing of metrics.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	m := s.cfg.Metrics
	return func(c echo.Context) error {
		if m == nil {
			return next(c)
		}
		photo := photoPaths[c.Path()]
		if photo {
			defer m.PhotoStarted()()
		}
		err := next(c)
		res := c.Response()
		// A photo request is labelled by its operation, also when it was
		// refused before its handler ran; others by their route.
		op := c.Path()
		switch {
		case photo:
			op = strings.TrimPrefix(op, "/v1/")
		case op == "":
			op = "unrouted"
		}
		r := metrics.Request{Op: op, Status: res.Status, Duration: time.Since(requestStart(c)), PlatesFound: -1}
		r.Code, _ = c.Get(ctxErrorCode).(string)
		r.Overload, _ = c.Get(ctxOverload).(string)
		if t, ok := c.Get(ctxTimings).(timings); ok {
			r.Worked, r.QueueWait, r.Processing = true, t.queueWait, t.processing
		}
		h := res.Header()
		if res.Status == 200 && photo && h.Get("Idempotent-Replayed") == "" {
			r.Credits, _ = strconv.ParseInt(h.Get("X-Credits-Charged"), 10, 64)
			if n, err := strconv.Atoi(h.Get("X-Plates-Found")); err == nil {
				r.PlatesFound = n
			}
		}
		m.RequestDone(r)
		return err
	}
}

// serveMetrics serves GET /metrics, behind METRICS_TOKEN when it is set,
// to loopback clients only when it is not; a wrong token counts against
// the client's failed authentications.
func (s *Server) serveMetrics() echo.HandlerFunc {
	h := s.cfg.Metrics.Handler()
	return func(c echo.Context) error {
		if s.cfg.MetricsToken != "" {
			// Wrong tokens count like wrong API keys.
			if err := s.authBlocked(c); err != nil {
				return err
			}
		}
		if !metrics.Authorized(c.Request(), s.cfg.MetricsToken) {
			return s.authFailed(c, carphoto.Errorf(carphoto.EInvalidAPIKey, "%s", metrics.Denied(s.cfg.MetricsToken)))
		}
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}
