package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"carphoto"
	"carphoto/billing"
	"carphoto/idempotency"
	"carphoto/imageops"
	"carphoto/jobs"
)

// headerIdempotencyKey names the client's key for safe retries.
const headerIdempotencyKey = "Idempotency-Key"

// replayedHeaders are the headers of a success kept with its body and sent
// again on a replay (beside Idempotent-Replayed: true).
var replayedHeaders = []string{echo.HeaderContentType, "X-Credits-Charged", "X-Credits-Remaining", "X-Plates-Found", headerPlatesDesigned, echo.HeaderLocation,
	headerCarTruncated, headerCarOccluded, headerCarScale, headerColorProfile}

// idempotencyKey returns the request's Idempotency-Key and whether the
// header was sent at all: one sent empty is a key refused, not a key left
// out (a retry would otherwise run, and be charged, again).
func idempotencyKey(h http.Header) (key string, sent bool) {
	v, sent := h[headerIdempotencyKey]
	if !sent || len(v) == 0 {
		return "", false
	}
	return strings.TrimSpace(v[0]), true
}

// once is a photo request's idempotency claim: the zero once (no header, or
// the feature off) does nothing.
type once struct {
	s     *Server
	claim idempotency.Claim
	done  bool
}

// beginPhotoOnce is beginOnce for a photo request: its content is the
// operation, its parameters, the asset named and the files.
func (s *Server) beginPhotoOnce(c echo.Context, req jobs.Request, ids assetIDs) (o *once, replayed bool, err error) {
	params, err := jobs.ParamsJSON(req.Params)
	if err != nil {
		return &once{s: s}, false, carphoto.Wrap(err, carphoto.EInternal, "internal error")
	}
	content := [][]byte{[]byte(req.Params.Op), params, []byte(ids.one()), req.Photo, secondImage(req)}
	if req.Params.Plates == imageops.PlatesLogo && req.Params.Backdrop != nil {
		// plates=logo on a backdrop: the design too, after what a call
		// with one second image is made of.
		content = append(content, []byte(ids.design), req.Design)
	}
	return s.beginOnce(c, req.AccountID, content...)
}

// beginOnce looks up the request's Idempotency-Key, if it has one, for
// the account's request with this content (what makes two requests the
// same). It returns replayed true when it has answered the request itself
// (the first call's answer again); an error for a key in use by a running
// or a different request. Otherwise the caller runs the request and calls
// finish on success; end releases the claim on any other outcome.
func (s *Server) beginOnce(c echo.Context, account string, content ...[]byte) (o *once, replayed bool, err error) {
	o = &once{s: s}
	key, sent := idempotencyKey(c.Request().Header)
	if !sent || s.cfg.IdempotencyTTL <= 0 {
		return o, false, nil
	}
	if key == "" {
		return o, false, carphoto.Errorf(carphoto.EInvalidParams,
			"Idempotency-Key is empty; send 1 to 255 printable ASCII characters, or leave the header out")
	}
	if len(key) > 255 || strings.IndexFunc(key, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return o, false, carphoto.Errorf(carphoto.EInvalidParams,
			"Idempotency-Key must be 1 to 255 printable ASCII characters without spaces")
	}
	fp := idempotency.Fingerprint(content...)
	var (
		state idempotency.State
		claim idempotency.Claim
		res   *idempotency.Response
	)
	ctx, cancel := s.redisDeadline(c)
	defer cancel()
	state, claim, res, err = s.idem.Begin(ctx, account, key, fp)
	switch {
	case err != nil && ctx.Err() != nil:
		return o, false, s.cut(ctx, err) // the deadline, or a client gone: not an outage
	case err != nil:
		return o, false, carphoto.Wrap(err, carphoto.EUnavailable, "the service's store is unavailable; retry shortly")
	}
	switch state {
	case idempotency.InProgress:
		c.Response().Header().Set("Retry-After", "1")
		return o, false, carphoto.Errorf(carphoto.ERequestInProgress,
			"the first request with this Idempotency-Key is still running; retry when it has finished")
	case idempotency.Mismatch:
		return o, false, carphoto.Errorf(carphoto.EIdempotencyKeyReused,
			"this Idempotency-Key was used within the last %v for a request with other content; use a new key", s.cfg.IdempotencyTTL)
	case idempotency.Replay:
		if res.Unpaid {
			return o, true, s.replayUnpaid(c, account, claim, res)
		}
		h := c.Response().Header()
		for k, v := range res.Header {
			h.Set(k, v)
		}
		h.Set("Idempotent-Replayed", "true")
		// Its length announced, as the first answer's was (writeAnswer): a
		// large answer replayed is not sent chunked.
		_, err := s.writeAnswer(c, time.Time{}, res.Status, res.Header[echo.HeaderContentType], res.Body)
		return o, true, err
	}
	o.claim = claim
	return o, false, nil
}

// finish keeps a successful answer (status, body and the headers already
// set on c) for the key's retries; unpaid when it did not reach the client
// and was not charged, so that the retry that delivers it pays for it.
func (o *once) finish(ctx context.Context, c echo.Context, status int, contentType string, body []byte, unpaid bool) {
	if o.claim == (idempotency.Claim{}) {
		return
	}
	o.done = true
	h := map[string]string{}
	for _, k := range replayedHeaders {
		if v := c.Response().Header().Get(k); v != "" {
			h[k] = v
		}
	}
	h[echo.HeaderContentType] = contentType
	if err := o.s.idem.Finish(ctx, o.claim, idempotency.Response{Status: status, Header: h, Body: body, Unpaid: unpaid}); err != nil {
		// The answer still goes out; a retry runs again once the claim lapses.
		logFor(c).Error().Err(err).Msg("keep the answer for the Idempotency-Key")
	}
}

// end releases a claim whose request did not succeed: it was not charged,
// so a retry with the same key runs afresh.
func (o *once) end(ctx context.Context, c echo.Context) {
	if o.done {
		return
	}
	if err := o.s.idem.Abandon(ctx, o.claim); err != nil {
		logFor(c).Error().Err(err).Msg("release the Idempotency-Key")
	}
}

// replayUnpaid sends again a photo answer its first call did not deliver,
// and so did not charge: charged like a first answer, on delivery (hold,
// write, capture), and once, however many retries deliver it (Pay).
func (s *Server) replayUnpaid(c echo.Context, account string, claim idempotency.Claim, res *idempotency.Response) error {
	ctx, cancel := s.redisDeadline(c)
	defer cancel()
	call, ok := c.Get(ctxCall).(billing.Call)
	if !ok {
		op, _ := c.Get(ctxOp).(string)
		call = billing.Call{Op: op}
	}
	hold, settle, err := s.placeHold(ctx, c, account, requestIDOf(c), call)
	defer settle()
	if err != nil {
		return err
	}
	h := c.Response().Header()
	for k, v := range res.Header {
		h.Set(k, v)
	}
	h.Set("Idempotent-Replayed", "true")
	h.Set("X-Credits-Charged", strconv.FormatInt(hold.Amount(), 10))
	h.Set("X-Credits-Remaining", strconv.FormatInt(hold.remaining, 10))
	delivered, err := s.writeAnswer(c, ackUntil(ctx), res.Status, res.Header[echo.HeaderContentType], res.Body)
	if !delivered {
		return err
	}
	if s.pay(ctx, c, claim) {
		s.capture(ctx, c, hold)
	}
	return nil
}

// pay marks a replayed answer that was delivered paid, and reports whether
// this retry is the one to charge for it. It runs to its end when the
// client leaves: net/http ends the request's context on the client's
// EOF, which a client that closes at once would make every time, leaving
// the answer free and unpaid for its next retry too. A failure is logged:
// the customer wins.
func (s *Server) pay(ctx context.Context, c echo.Context, claim idempotency.Claim) bool {
	deadline, _ := ctx.Deadline()
	pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), later(deadline, time.Now().Add(settleGrace)))
	defer cancel()
	paid, err := s.idem.Pay(pctx, claim)
	if err != nil {
		logFor(c).Error().Err(err).Msg("mark the replayed answer paid failed: it goes uncharged")
		return false
	}
	return paid // false: another retry paid for it
}
