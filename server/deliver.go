package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"carphoto"
	"carphoto/billing"
	"carphoto/imageops"
	"carphoto/jobs"
)

// A photo call's money, from hold to capture: the hold's id is chosen
// before it is placed, so every end of the call (a client gone, the
// deadline, a Redis error, a worker's death) releases that very hold, once;
// a capture happens only once the client's TCP stack acknowledged the
// answer's last byte (deliver, ack.go). What the server cannot know (a
// platform whose sockets cannot say, a process killed between the
// acknowledgement and the capture) is settled in the customer's favour:
// the hold is released, or lapses to the sweep.

// held is a call's hold from its placing to its settling: captured once
// the answer was delivered (capture), released by placeHold's settle on
// every other end.
type held struct {
	billing.Hold
	remaining int64 // the account's credits once the hold is taken
	captured  bool
}

// placeHold names and places the call's hold, and returns settle, which
// the caller defers at once, also when placing failed (a try whose answer
// was lost may have made the hold): it releases the hold, once, unless it
// was captured. The one settling of a photo call's hold, for a first
// answer (photoHandler) and an unpaid replay (replayUnpaid) alike.
func (s *Server) placeHold(ctx context.Context, c echo.Context, account, requestID string, call billing.Call) (hold *held, settle func(), err error) {
	hold = &held{Hold: s.billing.NewHold(account, requestID, call)}
	settle = func() {
		if !hold.captured {
			s.release(ctx, logFor(c), hold.Hold)
		}
	}
	hold.remaining, err = s.billing.Place(ctx, hold.Hold)
	return hold, settle, s.cut(ctx, err)
}

// takeSlot takes one of the process's photo slots, waiting for one until
// ctx ends. A call whose deadline passed, or whose client left, while it
// waited ends as such (cut), not as "at capacity": the slots were busy,
// not the service refusing.
func (s *Server) takeSlot(ctx context.Context) (free func(), err error) {
	free = func() { <-s.slots }
	if err := ctx.Err(); err != nil {
		return nil, s.cut(ctx, err)
	}
	select {
	case s.slots <- struct{}{}:
		return free, nil
	default:
	}
	select {
	case s.slots <- struct{}{}:
		return free, nil
	case <-ctx.Done():
		return nil, s.cut(ctx, ctx.Err())
	}
}

// cut is the error of a step that failed with err once the call's own
// context had ended: its deadline passed (500 processing_failed, as any
// call that outlives it) or its client left. Any other error is err.
func (s *Server) cut(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return s.overDeadline(err)
	case ctx.Err() != nil:
		return errClientGone(err)
	}
	return err
}

// overDeadline is the answer to a call whose deadline (REQUEST_TIMEOUT
// from its arrival) passed before its answer was ready, whatever step it
// was at.
func (s *Server) overDeadline(err error) error {
	return carphoto.Wrap(err, carphoto.EProcessingFailed, fmt.Sprintf(
		"processing did not finish within %v; you were not charged, please retry", s.cfg.RequestTimeout))
}

func errClientGone(err error) error {
	return carphoto.Wrap(err, carphoto.EProcessingFailed, "the request was cancelled; you were not charged")
}

// headerPlatesDesigned is how many of the plates found got the design, on
// plate-logo and a studio call with plates=logo: beside X-Plates-Found, it
// lets a dealer route the photos where some plate was hidden instead.
const headerPlatesDesigned = "X-Plates-Designed"

// deliver sends a finished call's answer and captures its hold once the
// answer reached the client (writeAnswer); X-Credits-Charged announces that
// capture. A hold it did not capture is released by placeHold's settle.
// The answer is kept for the call's Idempotency-Key, marked
// unpaid when it did not reach the client, so that a retry gets it and
// pays for it then, once.
func (s *Server) deliver(ctx context.Context, c echo.Context, hold *held, res *jobs.Result, idem *once) error {
	h := c.Response().Header()
	h.Set("X-Credits-Charged", strconv.FormatInt(hold.Amount(), 10))
	h.Set("X-Credits-Remaining", strconv.FormatInt(hold.remaining, 10))
	switch op, _ := c.Get(ctxOp).(string); op {
	case string(imageops.PlateLogo):
		h.Set(headerPlatesDesigned, strconv.Itoa(res.PlatesDesigned))
		fallthrough
	case string(imageops.BlurPlates):
		h.Set("X-Plates-Found", strconv.Itoa(res.PlatesFound))
	}
	delivered, err := s.writeAnswer(c, ackUntil(ctx), http.StatusOK, res.ContentType, res.Body)
	idem.finish(context.WithoutCancel(ctx), c, http.StatusOK, res.ContentType, res.Body, !delivered)
	if !delivered {
		logFor(c).Warn().Err(err).Str("hold", hold.ID()).Msg("the answer did not reach the client: not charged")
		for _, k := range []string{"X-Credits-Charged", "X-Credits-Remaining", "X-Plates-Found", headerPlatesDesigned, headerCarTruncated, headerCarOccluded, headerCarScale} {
			h.Del(k) // not on the error that goes out instead, if anything does
		}
		return err
	}
	s.capture(ctx, c, hold)
	return nil
}

// capture charges a hold whose answer was delivered. The charge gets a few
// seconds even past the deadline, so a blip at the very end does not waste
// it; should it fail still, the client keeps its answer uncharged.
func (s *Server) capture(ctx context.Context, c echo.Context, hold *held) {
	deadline, _ := ctx.Deadline()
	cctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), later(deadline, time.Now().Add(settleGrace)))
	defer cancel()
	if _, err := s.billing.Capture(cctx, hold.Hold); err != nil {
		logFor(c).Error().Err(err).Str("hold", hold.ID()).Msg("capture after delivery failed: the answer goes uncharged")
		return
	}
	hold.captured = true
}

// writeAnswer sends body as the whole answer, its length announced, with
// a write deadline that leaves the client time to read it at minReadRate
// (answerDeadline). Unless until (the call's deadline) is zero, it
// reports whether the client has it: its last byte acknowledged by the
// client's TCP stack by that write deadline (answerWire). An answer that
// was not is cut off: the connection is reset, so the client has no more
// of it than it acknowledged. How it ended is counted. A client already
// gone (net/http saw its connection close, which ends the request's
// context) is sent nothing: err says so.
func (s *Server) writeAnswer(c echo.Context, until time.Time, status int, contentType string, body []byte) (delivered bool, err error) {
	ctx := c.Request().Context()
	if err := ctx.Err(); err != nil {
		return false, errClientGone(err)
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, contentType)
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	rc := http.NewResponseController(c.Response().Writer)
	deadline := answerDeadline(until, len(body))
	_ = rc.SetWriteDeadline(deadline) // else net/http's WriteTimeout stays
	var wire *answerWire
	if !until.IsZero() {
		if wire, err = beginAnswer(connOf(ctx)); err != nil {
			// The customer wins: the answer goes uncharged, and the
			// connection is reset after it (below), so it is never had
			// in full for free.
			h.Set(echo.HeaderConnection, "close")
		}
	}
	c.Response().WriteHeader(status)
	_, werr := c.Response().Write(body)
	if werr == nil {
		if ferr := rc.Flush(); ferr != nil && !errors.Is(ferr, http.ErrNotSupported) {
			werr = ferr
		}
	}
	switch {
	case until.IsZero():
		return werr == nil, nil
	case wire == nil:
		s.cfg.Metrics.AnswerDelivery(string(ackUnknown))
		resetConn(connOf(ctx))
		return false, fmt.Errorf("the answer was written, but this transport cannot tell whether the client has it: %w", err)
	}
	outcome := ackUnknown
	switch {
	case werr != nil:
		// Cut short by the client, or by the write deadline: what net/http
		// would still send on closing is dropped.
		outcome = ackAborted
		if p, err := position(wire.tcp); err == nil && !p.open {
			outcome = ackClosed
		}
	case wire.written(len(body)) == nil:
		outcome = wire.await(deadline)
	}
	s.cfg.Metrics.AnswerDelivery(string(outcome))
	if outcome != ackAcknowledged {
		wire.reset()
		return false, fmt.Errorf("the answer was not acknowledged by the client (%s): connection reset", outcome)
	}
	return true, nil
}

// ackUntil is the call's deadline, after which its answer's write may
// still run (answerDeadline); a few seconds where it has none.
func ackUntil(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(settleGrace)
}
