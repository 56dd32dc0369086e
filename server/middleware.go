package server

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"carphoto"
	"carphoto/billing"
)

// Context keys shared by the middleware and handlers.
const (
	ctxRequestID = "carphoto.request_id"
	ctxLogger    = "carphoto.logger"
	ctxErrorCode = "carphoto.error_code"
	ctxOp        = "carphoto.op"
	ctxCall      = "carphoto.call" // a photo call's billing.Call, once its fields are read
	ctxTimings   = "carphoto.timings"
	ctxStart     = "carphoto.start"
)

// timings are what a photo request learns from its worker, for the log line.
type timings struct {
	queueWait, processing time.Duration
	worker                string
}

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newRequestID returns a 26-character random id; unique enough to key a
// request's Redis entries and its ledger lines.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(idEncoding.EncodeToString(b[:]))
}

// requestID gives every request a server-made id, sent back as X-Request-Id
// and carried by every log line. A client-sent id is logged beside it but
// never trusted as a key.
func (s *Server) requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := newRequestID()
		c.Set(ctxStart, time.Now())
		c.Set(ctxRequestID, id)
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		lc := s.log.With().Str("request_id", id)
		if cid := clientRequestID(c.Request()); cid != "" {
			lc = lc.Str("client_request_id", cid)
			c.Response().Header().Set(headerClientRequestID, cid)
			r := c.Request()
			c.SetRequest(r.WithContext(billing.WithClientRequestID(r.Context(), cid)))
		}
		l := lc.Logger()
		c.Set(ctxLogger, &l)
		return next(c)
	}
}

// clientRequestID is the client's own X-Request-Id, when it is 1 to 128
// printable ASCII characters (else none): echoed back as
// X-Client-Request-Id, logged and kept in the ledger beside ours, never a
// key of anything.
func clientRequestID(r *http.Request) string {
	cid := r.Header.Get(echo.HeaderXRequestID)
	if len(cid) > 128 || strings.IndexFunc(cid, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
		return ""
	}
	return cid
}

// requestIDOf returns the id requestID gave this request.
func requestIDOf(c echo.Context) string {
	id, _ := c.Get(ctxRequestID).(string)
	return id
}

// logFor returns the request's logger, with its request id.
func logFor(c echo.Context) *zerolog.Logger {
	if l, ok := c.Get(ctxLogger).(*zerolog.Logger); ok {
		return l
	}
	l := zerolog.Nop()
	return &l
}

// recoverPanics turns a panic in a handler into a 500 internal error and a
// log line with the stack, instead of a dropped connection.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				logFor(c).Error().Str("panic", fmt.Sprint(r)).Bytes("stack", debug.Stack()).Msg("handler panicked")
				err = carphoto.Errorf(carphoto.EInternal, "internal error")
			}
		}()
		return next(c)
	}
}

// accessLog writes one line per request: account, operation, status, code,
// queue wait and processing time.
func (s *Server) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		r, res := c.Request(), c.Response()
		ev := logFor(c).Info().
			Str("method", r.Method).Str("path", r.URL.Path).
			Int("status", res.Status).Int64("bytes_out", res.Size).
			Dur("total_ms", time.Since(start))
		if a := accountID(c); a != "" {
			ev = ev.Str("account", a)
		}
		if op, ok := c.Get(ctxOp).(string); ok {
			ev = ev.Str("op", op)
		}
		if code, ok := c.Get(ctxErrorCode).(string); ok {
			ev = ev.Str("code", code)
		}
		if t, ok := c.Get(ctxTimings).(timings); ok {
			ev = ev.Dur("queue_wait_ms", t.queueWait).Dur("processing_ms", t.processing).Str("worker", t.worker)
		}
		ev.Msg("request")
		return nil
	}
}
