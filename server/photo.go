package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"carphoto"
	"carphoto/billing"
	"carphoto/imageops"
	"carphoto/jobs"
)

// photoHandler serves POST /v1/<op>: take one of its key's slots (waiting
// in arrival order for one), read and validate the upload, hold the
// credits, then take one of the process's photo slots, run the task
// through the queue, write the answer, and capture once the client
// acknowledged its last byte, or release on anything else (deliver.go).
// Everything a client controls (a slow upload, a bad field, an empty
// balance) is settled before a process slot is taken, so it never makes
// other keys' requests wait. The caller is charged only for an answer
// that reached it.
func (s *Server) photoHandler(op imageops.Op) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Set(ctxOp, string(op))
		ctx := c.Request().Context()
		deadline := requestStart(c).Add(s.cfg.RequestTimeout)
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()

		// A call that cannot start in time is answered at once (admit),
		// or withdrawn once its start-by time passes while it waits: in
		// its key's line, for a process slot or in the queue.
		unqueued, err := s.admit(ctx, c, op, deadline)
		if err != nil {
			return err
		}
		defer unqueued()
		startCtx, cancelStart := context.WithDeadline(ctx, s.startBy(op, deadline))
		defer cancelStart()
		leave, err := s.enter(startCtx, c)
		if err != nil {
			return err
		}
		// Deferred first, so it runs last and on every path: a panic, a
		// client gone, a failed release. Should it fail, the count expires.
		defer leave()

		freeUpload, err := s.reserveUpload(c, s.photoBodyMost(op))
		if err != nil {
			return err
		}
		defer freeUpload()
		// The answer's type may follow Accept (accept.go).
		c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
		req, ids, err := s.readUpload(c, op, deadline)
		if errors.Is(err, errUploadsFull) {
			return uploadsFull(c) // its Retry-After; the body is left unread
		}
		if err != nil {
			return err
		}
		if req.Params.Format == "" { // the field absent (sent empty is refused)
			req.Params.Format = acceptedFormat(c.Request().Header)
		}
		account := accountID(c)
		req.AccountID, req.ID, req.Deadline = account, requestIDOf(c), deadline
		call := callOf(req.Params)
		c.Set(ctxCall, call)
		// A retry with the Idempotency-Key of a finished request gets its
		// answer again here, uncharged; duplicates never reach the hold.
		idem, replayed, err := s.beginPhotoOnce(c, req, ids)
		if replayed || err != nil {
			return err
		}
		defer idem.end(context.WithoutCancel(ctx), c)
		if err := s.useAssets(ctx, account, ids, &req); err != nil {
			return err
		}

		// Redis steps are tried again while Redis is out of reach, within
		// the deadline (billing rides through): a restart or failover of a few seconds
		// costs the request time, not its answer. The hold is released on
		// every end but a delivered answer's capture (deliver.go).
		hold, settle, err := s.placeHold(ctx, c, account, req.ID, call)
		defer settle()
		if err != nil {
			return err
		}
		free, err := s.takeSlot(startCtx)
		if err != nil {
			if ctx.Err() == nil && startCtx.Err() != nil {
				return s.overloaded(c, overloadWithdrawn, 0)
			}
			return err
		}
		defer free()

		req.StartBy = func() time.Time { return s.startBy(op, deadline) }
		unqueued()
		res, err := s.jobs.Do(ctx, req)
		if err != nil {
			return s.doFailed(ctx, c, req, ids.one(), err)
		}
		if res.Code == carphoto.EUnavailable {
			if res.Overran { // started in time, cut short by the deadline (jobs.Overran)
				s.pace.Observe(op, res.Processing)
				return s.overloaded(c, overloadOverran, 0)
			}
			return s.overloaded(c, overloadWithdrawn, 0) // a worker took it up too late (jobs.Withdrawn)
		}
		s.pace.Observe(op, res.Processing)
		c.Set(ctxTimings, timings{queueWait: res.QueueWait, processing: res.Processing, worker: res.Worker})
		c.Response().Header().Set("Server-Timing", fmt.Sprintf("queue;dur=%.1f, process;dur=%.1f",
			float64(res.QueueWait.Microseconds())/1000, float64(res.Processing.Microseconds())/1000))
		if !res.OK() {
			return &carphoto.Error{Code: res.Code, Message: res.Message}
		}

		studioHeaders(c.Response().Header(), req.Params, res)
		if res.ICCDropped {
			c.Response().Header().Set(headerColorProfile, colorProfile(res.ICCConverted))
		}
		return s.deliver(ctx, c, hold, res, idem)
	}
}

// headerColorProfile is on an answer that left out its photo's colour
// profile for its size (codec.EmbedICC): "converted" when its pixels were
// converted from it to sRGB, "dropped" when they are as they were (a
// profile the converter does not read).
const headerColorProfile = "X-Color-Profile"

func colorProfile(converted bool) string {
	if converted {
		return "converted"
	}
	return "dropped"
}

// useAsset is the key in the asset store of the design or backdrop
// (backdrop) saved in the caller's own Assets library under assetID, which
// must be of the kind the field names: the image stays in the asset store,
// for the worker to read, and its size, from its record, is held to
// today's limits.
func (s *Server) useAsset(ctx context.Context, account, assetID string, backdrop bool) (string, error) {
	kind, field := billing.AssetDesign, "logo asset"
	if backdrop {
		kind, field = billing.AssetBackdrop, "backdrop asset"
	}
	ref, err := s.billing.AssetRef(ctx, account, assetID, kind)
	if err != nil {
		return "", s.cut(ctx, err)
	}
	if err := s.checkAssetSize(field, ref, backdrop); err != nil {
		return "", err
	}
	return ref.Key, nil
}

// doFailed is the answer to a task that brought no result: the call's
// deadline or its client's leaving, the deadline in the queue, workers
// that died running it, or anything else, never charged.
func (s *Server) doFailed(ctx context.Context, c echo.Context, req jobs.Request, assetID string, err error) error {
	// What a task that overran its deadline ran is a lower bound on what
	// its operation takes now: the pace learns it, so that the calls
	// behind it are not admitted to the same end.
	var ov *jobs.OverranError
	if errors.As(err, &ov) {
		s.pace.Observe(req.Params.Op, ov.Ran)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Admitted at the pace seen, so slowed by a machine busier
			// than that: overload, answered as the rest of it is.
			return s.overloaded(c, overloadOverran, 0)
		}
	}
	switch {
	case ctx.Err() != nil:
		return s.cut(ctx, err) // its deadline passed, or its client left
	case errors.Is(err, jobs.ErrWithdrawn):
		return s.overloaded(c, overloadWithdrawn, 0)
	case errors.Is(err, jobs.ErrTimeout):
		return carphoto.Wrap(err, carphoto.EProcessingFailed, fmt.Sprintf(
			"processing did not finish within %v; you were not charged, please retry", s.cfg.RequestTimeout))
	case errors.Is(err, jobs.ErrWorkersDied):
		// What killed two workers is on record, to be looked into; the
		// task is not run again.
		logFor(c).Error().Err(err).Str("op", string(req.Params.Op)).RawJSON("params", jobs.LogParams(req.Params)).Int("photo_bytes", len(req.Photo)).
			Int("design_bytes", len(req.Design)).Int("backdrop_bytes", len(req.Backdrop)).Str("asset", assetID).Msg("task ended: the worker processes running it died")
		return carphoto.Wrap(err, carphoto.EProcessingFailed,
			"processing this photo stopped the workers that ran it, so it was ended; you were not charged. Retrying it will not help: check the photo and the parameters")
	}
	return carphoto.Wrap(err, carphoto.EProcessingFailed, "processing failed on our side; you were not charged, please retry")
}

// enter takes one of the key's MAX_IN_FLIGHT_PER_KEY slots, waiting in
// arrival order behind the key's earlier requests until ctx's deadline,
// the call's start-by time (a Redis blip is ridden through); leave frees
// it. A request still waiting then is withdrawn: 503 with Retry-After,
// uncharged.
func (s *Server) enter(ctx context.Context, c echo.Context) (leave func(), err error) {
	key, _ := c.Get(ctxAccount).(billing.Account)
	inflight, err := s.billing.Enter(ctx, key.KeyID, requestIDOf(c))
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return nil, s.overloaded(c, overloadWithdrawn, 0)
	case errors.Is(err, context.Canceled):
		return nil, carphoto.Wrap(err, carphoto.EProcessingFailed, "the request was cancelled; you were not charged")
	case err != nil:
		return nil, err
	}
	return func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleGrace)
		defer cancel()
		err := s.billing.Leave(lctx, inflight)
		if err == nil {
			return
		}
		if lctx.Err() == nil {
			logFor(c).Error().Err(err).Msg("end request in flight")
			return
		}
		// Redis is still out of reach: the slot would stay taken until it
		// lapses (REQUEST_TIMEOUT+10s), making the key's next calls wait;
		// free it as soon as Redis answers, without holding up this answer.
		log := logFor(c)
		go func() {
			bctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout+10*time.Second)
			defer cancel()
			if err := s.billing.Leave(bctx, inflight); err != nil {
				log.Warn().Err(err).Msg("end request in flight: gave up; the slot lapses on its own")
			}
		}()
	}, nil
}

// settleGrace is how long capturing or releasing a hold may keep trying
// past the request's deadline.
const settleGrace = 3 * time.Second

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// release returns a hold's credits, trying again while Redis is out of
// reach; if it still is after the request's deadline (plus settleGrace),
// it keeps trying in the background until Redis answers or the hold
// expires on its own (billing's sweep returns it then), so that the
// credits show as spent no longer than the outage.
func (s *Server) release(ctx context.Context, log *zerolog.Logger, h billing.Hold) {
	deadline, _ := ctx.Deadline()
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), later(deadline, time.Now().Add(settleGrace)))
	defer cancel()
	err := s.billing.Release(rctx, h)
	if err == nil {
		return
	}
	if rctx.Err() == nil {
		log.Error().Err(err).Str("hold", h.ID()).Msg("release hold")
		return
	}
	log.Warn().Err(err).Str("hold", h.ID()).Msg("release hold: Redis unreachable, retrying in the background")
	go func() {
		bctx, cancel := context.WithTimeout(context.Background(), s.cfg.HoldTTL)
		defer cancel()
		if err := s.billing.Release(bctx, h); err != nil {
			log.Error().Err(err).Str("hold", h.ID()).Msg("release hold: gave up; the hold expires on its own")
			return
		}
		log.Info().Str("hold", h.ID()).Msg("release hold: released once Redis answered")
	}()
}

// requestStart is when the request arrived; its deadline counts from here.
func requestStart(c echo.Context) time.Time {
	if t, ok := c.Get(ctxStart).(time.Time); ok {
		return t
	}
	return time.Now()
}
