package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"carphoto"
	"carphoto/billing"
	"carphoto/imageops"
	"carphoto/jobs"
)

// acceptedFields are the multipart fields op accepts: its images' fields
// and its parameters (imageops.ParamNames); anything else is refused so a
// misspelt option never passes silently.
func acceptedFields(op imageops.Op) []string {
	names := []string{"image", "imageUrl"}
	switch op {
	case imageops.PlateLogo, imageops.LogoOverlay:
		names = append(names, "logo", "logoAssetId", "logoUrl")
	case imageops.CarShadow, imageops.CarCutout:
		names = append(names, "backgroundImage", "backgroundUrl", "backgroundAssetId")
	}
	return append(names, imageops.ParamNames(op)...)
}

// maxFieldBytes caps a text field; the longest legitimate one is an asset id.
const maxFieldBytes = 1024

// upload is a parsed photo request.
type upload struct {
	image, logo, backdrop          []byte
	hasImage, hasLogo, hasBackdrop bool
	values                         map[string]string
}

// photoHandler serves POST /v1/<op>: take one of its key's slots (waiting
// in arrival order for one), read and validate the upload, hold the
// credits, then take one of the process's photo slots, run the task
// through the queue, and capture on success or release on anything else.
// Everything a client controls (a slow upload, a bad field, an empty
// balance) is settled before a process slot is taken, so it never makes
// other keys' requests wait. The caller is charged only for a returned
// image.
func (s *Server) photoHandler(op imageops.Op) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Set(ctxOp, string(op))
		ctx := c.Request().Context()
		deadline := requestStart(c).Add(s.cfg.RequestTimeout)
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()

		leave, err := s.enter(ctx, c)
		if err != nil {
			return err
		}
		// Deferred first, so it runs last and on every path: a panic, a
		// client gone, a failed release. Should it fail, the count expires.
		defer leave()

		req, assetID, err := s.readUpload(c, op, deadline)
		if err != nil {
			return err
		}
		account := accountID(c)
		req.AccountID, req.ID, req.Deadline = account, requestIDOf(c), deadline
		// A retry with the Idempotency-Key of a finished request gets its
		// answer again here, uncharged; duplicates never reach the hold.
		idem, replayed, err := s.beginPhotoOnce(c, req, assetID)
		if replayed || err != nil {
			return err
		}
		defer idem.end(context.WithoutCancel(ctx), c)
		if assetID != "" {
			// The design or backdrop comes from the caller's own Assets
			// library, and must be of the kind the field names.
			kind, field := billing.AssetDesign, "logo asset"
			if req.Params.Backdrop != nil {
				kind, field = billing.AssetBackdrop, "backdrop asset"
			}
			var data []byte
			err := jobs.Retry(ctx, func(ctx context.Context) (err error) {
				data, err = s.billing.AssetData(ctx, account, assetID, kind)
				return err
			})
			if err != nil {
				return err
			}
			if req.Params.Backdrop != nil {
				_, _, err = s.checkBackdrop(field, data)
				req.Backdrop = data
			} else {
				_, _, err = s.checkHeader(field, data)
				req.Design = data
			}
			if err != nil {
				return err
			}
		}

		// Redis steps are tried again while Redis is out of reach, within
		// the deadline (jobs.Retry): a restart or failover of a few seconds
		// costs the request time, not its answer.
		var hold billing.Hold
		err = jobs.Retry(ctx, func(ctx context.Context) (err error) {
			hold, err = s.billing.Hold(ctx, account, req.ID, string(op))
			return err
		})
		if err != nil {
			return err
		}
		captured := false
		defer func() {
			if !captured {
				s.release(ctx, logFor(c), hold)
			}
		}()

		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-ctx.Done():
			return carphoto.Errorf(carphoto.EUnavailable, "the service is at capacity; retry shortly")
		}

		res, err := s.jobs.Do(ctx, req)
		switch {
		case errors.Is(err, jobs.ErrTimeout) || errors.Is(err, context.DeadlineExceeded):
			return carphoto.Wrap(err, carphoto.EProcessingFailed, fmt.Sprintf(
				"processing did not finish within %v; you were not charged, please retry", s.cfg.RequestTimeout))
		case errors.Is(err, context.Canceled):
			return carphoto.Wrap(err, carphoto.EProcessingFailed, "the request was cancelled; you were not charged")
		case errors.Is(err, jobs.ErrWorkersDied):
			// What killed two workers is on record, to be looked into; the
			// task is not run again.
			logFor(c).Error().Err(err).Str("op", string(op)).Interface("params", req.Params).Int("photo_bytes", len(req.Photo)).
				Int("design_bytes", len(req.Design)).Int("backdrop_bytes", len(req.Backdrop)).Str("asset", assetID).Msg("task ended: the worker processes running it died")
			return carphoto.Wrap(err, carphoto.EProcessingFailed,
				"processing this photo stopped the workers that ran it, so it was ended; you were not charged. Retrying it will not help: check the photo and the parameters")
		case err != nil:
			return carphoto.Wrap(err, carphoto.EProcessingFailed, "processing failed on our side; you were not charged, please retry")
		}
		c.Set(ctxTimings, timings{queueWait: res.QueueWait, processing: res.Processing, worker: res.Worker})
		c.Response().Header().Set("Server-Timing", fmt.Sprintf("queue;dur=%.1f, process;dur=%.1f",
			float64(res.QueueWait.Microseconds())/1000, float64(res.Processing.Microseconds())/1000))
		if !res.OK() {
			return &carphoto.Error{Code: res.Code, Message: res.Message}
		}

		// The work is done: the charge gets a few seconds even past the
		// deadline, so a blip at the very end does not waste it.
		cctx, ccancel := context.WithDeadline(context.WithoutCancel(ctx), later(deadline, time.Now().Add(settleGrace)))
		defer ccancel()
		var remaining int64
		err = jobs.Retry(cctx, func(ctx context.Context) (err error) {
			remaining, err = s.billing.Capture(ctx, hold)
			return err
		})
		if err != nil {
			return carphoto.Wrap(err, carphoto.EProcessingFailed, "could not record the charge; you were not charged, please retry")
		}
		captured = true
		h := c.Response().Header()
		h.Set("X-Credits-Charged", strconv.FormatInt(hold.Amount(), 10))
		h.Set("X-Credits-Remaining", strconv.FormatInt(remaining, 10))
		if op == imageops.BlurPlates || op == imageops.PlateLogo {
			h.Set("X-Plates-Found", strconv.Itoa(res.PlatesFound))
		}
		idem.finish(context.WithoutCancel(ctx), c, http.StatusOK, res.ContentType, res.Body)
		return c.Blob(http.StatusOK, res.ContentType, res.Body)
	}
}

// readUpload is parseUpload within UploadTimeout: the connection's read
// deadline is set to UploadTimeout from now (the request's turn, after any
// wait for its key's slot), within the request's deadline, so a stalled or
// trickling upload ends as 408 request_timeout at that time, and the
// connection is closed (endUpload). A photo or design sent by URL is
// fetched once the body is read and the deadline cleared, within its own
// UploadTimeout (fetch).
func (s *Server) readUpload(c echo.Context, op imageops.Op, deadline time.Time) (jobs.Request, string, error) {
	if s.cfg.UploadTimeout <= 0 {
		return s.parseUpload(c, op)
	}
	rc := http.NewResponseController(c.Response())
	upload := time.Now().Add(s.cfg.UploadTimeout)
	if upload.After(deadline) {
		upload = deadline
	}
	if err := rc.SetReadDeadline(upload); err != nil {
		// Not a network connection (a test recorder): nothing can stall.
		return s.parseUpload(c, op)
	}
	up, err := s.readMultipart(c.Response().Writer, c.Request(), op)
	if err := endUpload(c, rc, err); err != nil {
		return jobs.Request{Params: imageops.Params{Op: op}}, "", err
	}
	return s.checkUpload(c.Request().Context(), op, up)
}

// endUpload settles the read deadline once an upload's reading is over
// with err. After a body read in full it is cleared: the server reads on
// in the background to notice a client that goes away, and a deadline left
// in place would cancel the request at it. After a failure it stays, so
// whatever net/http reads of the rest of the body before answering ends
// by then. After a timeout it is moved to now and the answer says
// Connection: close: net/http would otherwise wait, without end, to drain
// a stalled body before sending the 408, holding the connection open.
func endUpload(c echo.Context, rc *http.ResponseController, err error) error {
	switch {
	case carphoto.ErrorCode(err) == carphoto.ERequestTimeout:
		c.Response().Header().Set(echo.HeaderConnection, "close")
		_ = rc.SetReadDeadline(time.Unix(1, 0))
	case err != nil:
	default:
		if derr := rc.SetReadDeadline(time.Time{}); derr != nil {
			return carphoto.Wrap(derr, carphoto.EInternal, "internal error")
		}
	}
	return err
}

// enter takes one of the key's MAX_IN_FLIGHT_PER_KEY slots, waiting in
// arrival order behind the key's earlier requests until ctx's deadline (a
// Redis blip is ridden through); leave frees it. A request still waiting
// at its deadline ends as processing_failed, uncharged, like one whose
// processing outlived it.
func (s *Server) enter(ctx context.Context, c echo.Context) (leave func(), err error) {
	key, _ := c.Get(ctxAccount).(billing.Account)
	var inflight billing.InFlight
	err = jobs.Retry(ctx, func(ctx context.Context) (err error) {
		inflight, err = s.billing.Enter(ctx, key.KeyID, requestIDOf(c))
		return err
	})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return nil, carphoto.Wrap(err, carphoto.EProcessingFailed, fmt.Sprintf(
			"this API key's earlier calls kept its %d processing slots busy: the call did not start within %v; you were not charged, please retry",
			s.billing.Config().MaxInFlightPerKey, s.cfg.RequestTimeout))
	case errors.Is(err, context.Canceled):
		return nil, carphoto.Wrap(err, carphoto.EProcessingFailed, "the request was cancelled; you were not charged")
	case err != nil:
		return nil, err
	}
	return func() {
		err := s.billing.Leave(context.WithoutCancel(ctx), inflight)
		if err == nil {
			return
		}
		if !jobs.Transient(err) {
			logFor(c).Error().Err(err).Msg("end request in flight")
			return
		}
		// Redis is out of reach: the slot would stay taken until it lapses
		// (REQUEST_TIMEOUT+10s), making the key's next calls wait; free it
		// as soon as Redis answers, without holding up this answer.
		log := logFor(c)
		go func() {
			bctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout+10*time.Second)
			defer cancel()
			if err := jobs.Retry(bctx, func(ctx context.Context) error { return s.billing.Leave(ctx, inflight) }); err != nil {
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
	try := func(ctx context.Context) error { return s.billing.Release(ctx, h) }
	err := jobs.Retry(rctx, try)
	if err == nil {
		return
	}
	if !jobs.Transient(err) && !errors.Is(err, context.DeadlineExceeded) {
		log.Error().Err(err).Str("hold", h.ID()).Msg("release hold")
		return
	}
	log.Warn().Err(err).Str("hold", h.ID()).Msg("release hold: Redis unreachable, retrying in the background")
	go func() {
		bctx, cancel := context.WithTimeout(context.Background(), s.cfg.HoldTTL)
		defer cancel()
		if err := jobs.Retry(bctx, try); err != nil {
			log.Error().Err(err).Str("hold", h.ID()).Msg("release hold: gave up; the hold expires on its own")
			return
		}
		log.Info().Str("hold", h.ID()).Msg("release hold: released once Redis answered")
	}()
}

// parseUpload reads the multipart body part by part, capping every part
// while reading, then checks it (checkUpload).
func (s *Server) parseUpload(c echo.Context, op imageops.Op) (req jobs.Request, assetID string, err error) {
	up, err := s.readMultipart(c.Response().Writer, c.Request(), op)
	if err != nil {
		return jobs.Request{Params: imageops.Params{Op: op}}, "", err
	}
	return s.checkUpload(c.Request().Context(), op, up)
}

// logoSource names plate-logo's design and logo-overlay's logo.
var logoSource = imageSource{file: "logo", id: "logoAssetId", url: "logoUrl"}

// checkUpload validates the fields in the spec's order: a missing image
// first, then any invalid parameter (imageops.ParseParams); only then are
// imageUrl, logoUrl and backgroundUrl fetched, and the images' headers
// checked. assetID is the logoAssetId or backgroundAssetId (a backdrop
// where Params.Backdrop is set), for the caller to resolve in the
// account's library.
func (s *Server) checkUpload(ctx context.Context, op imageops.Op, up *upload) (req jobs.Request, assetID string, err error) {
	req.Params.Op = op
	v := up.values
	imageURL, hasURL := v["imageUrl"]
	switch {
	case !up.hasImage && !hasURL:
		return req, "", carphoto.Errorf(carphoto.EMissingImage,
			"image missing: send the photo as a multipart/form-data file field named \"image\", or its address in the field \"imageUrl\"")
	case up.hasImage && hasURL:
		return req, "", carphoto.Errorf(carphoto.EInvalidParams, "send exactly one of image (a file) or imageUrl, not both")
	}
	var backdrops int
	var pickErr error
	if op == imageops.CarShadow || op == imageops.CarCutout {
		backdrops, assetID, pickErr = backdropSource.pick(v, up.hasBackdrop)
	}
	if req.Params, err = imageops.ParseParams(op, v, backdrops > 0); err != nil {
		return req, "", err
	}
	switch {
	case backdrops > 1:
		return req, "", carphoto.Errorf(carphoto.EInvalidParams,
			"send at most one backdrop: backgroundImage (a file), backgroundUrl or backgroundAssetId, not several")
	case pickErr != nil:
		return req, "", pickErr
	}
	needsDesign := op == imageops.LogoOverlay || op == imageops.PlateLogo
	if needsDesign {
		n, id, err := logoSource.pick(v, up.hasLogo)
		switch {
		case n > 1:
			return req, "", carphoto.Errorf(carphoto.EInvalidParams, "send exactly one of logo (a file), logoAssetId or logoUrl, not several")
		case n == 0:
			return req, "", carphoto.Errorf(carphoto.EInvalidParams, "send exactly one of logo (a file), logoAssetId or logoUrl")
		case err != nil:
			return req, "", err
		}
		assetID = id
	}

	field := "image"
	if hasURL {
		field = "imageUrl"
		if up.image, err = s.fetch(ctx, field, imageURL); err != nil {
			return req, "", err
		}
	}
	width, height, err := s.checkHeader(field, up.image)
	if err != nil {
		return req, "", err
	}
	req.Photo = up.image
	if err := imageops.CheckCanvas(req.Params, width, height, s.limits()); err != nil {
		return req, "", err
	}
	if req.Params.Backdrop != nil && assetID == "" {
		if req.Backdrop, err = s.backdropOf(ctx, up); err != nil {
			return req, "", err
		}
	}
	if needsDesign && assetID == "" {
		field, data, err := s.sourceData(ctx, logoSource, v, up.logo, up.hasLogo)
		if err != nil {
			return req, "", err
		}
		if _, _, err := s.checkHeader(field, data); err != nil {
			return req, "", err
		}
		req.Design = data
	}
	return req, assetID, nil
}

// limits are the bounds every image a call sends is held to.
func (s *Server) limits() imageops.Limits {
	return imageops.Limits{MaxPixels: s.cfg.MaxPixels, MaxSide: s.cfg.MaxSide, MaxAspect: s.cfg.MaxAspect}
}

// checkHeader refuses a file that is empty, not an image, too large in
// pixels or on a side, or too long for its width, from its header alone
// (imageops.CheckImage); the worker decodes it fully. It returns the
// displayed width and height.
func (s *Server) checkHeader(field string, data []byte) (width, height int, err error) {
	return imageops.CheckImage(field, data, s.limits())
}

// readMultipart streams the body. Files are capped at MaxUploadBytes while
// reading; the first problem other than a missing image (no image and no
// imageUrl) is kept and returned after the whole body is read, so
// missing_image wins over it.
func (s *Server) readMultipart(w http.ResponseWriter, r *http.Request, op imageops.Op) (*upload, error) {
	up := &upload{values: map[string]string{}}
	ct := r.Header.Get(echo.HeaderContentType)
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != echo.MIMEMultipartForm || params["boundary"] == "" {
		// Whatever else was sent, there is no image in it.
		return up, nil
	}
	allowed := acceptedFields(op)
	// Two files (a photo and a design or backdrop) plus some slack for
	// fields and multipart framing. Past it
	// the server closes the connection after answering, so a client cannot
	// keep streaming.
	r.Body = http.MaxBytesReader(w, r.Body, 2*s.cfg.MaxUploadBytes+1<<20)
	mr := multipart.NewReader(r.Body, params["boundary"])
	var invalid error
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge("request body", s.cfg.MaxUploadBytes)
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, s.uploadTimedOut(err)
			}
			if invalid == nil {
				invalid = carphoto.Wrap(err, carphoto.EInvalidParams, "the body is not valid multipart/form-data: "+err.Error())
			}
			// What follows cannot be parsed: close the connection after the
			// answer rather than have net/http drain the rest first.
			w.Header().Set(echo.HeaderConnection, "close")
			break
		}
		name := part.FormName()
		switch {
		case name == "":
			continue
		case !slices.Contains(allowed, name):
			if invalid == nil {
				invalid = carphoto.Errorf(carphoto.EInvalidParams, "unknown field %q for %s; accepted fields: %s",
					name, op, strings.Join(allowed, ", "))
			}
			continue
		case seen[name]:
			if invalid == nil {
				invalid = carphoto.Errorf(carphoto.EInvalidParams, "field %q was sent more than once", name)
			}
			continue
		}
		seen[name] = true
		limit := int64(maxFieldBytes)
		switch name {
		case "image", "logo", "backgroundImage":
			limit = s.cfg.MaxUploadBytes
		case "imageUrl", "logoUrl", "backgroundUrl":
			limit = maxURLBytes
		}
		data, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge("request body", s.cfg.MaxUploadBytes)
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, s.uploadTimedOut(err)
			}
			if invalid == nil {
				invalid = carphoto.Wrap(err, carphoto.EInvalidParams, "could not read field "+strconv.Quote(name)+": the upload was cut short")
			}
			continue
		}
		if int64(len(data)) > limit {
			if name == "image" || name == "logo" || name == "backgroundImage" {
				return nil, tooLarge(name, s.cfg.MaxUploadBytes)
			}
			if invalid == nil {
				invalid = carphoto.Errorf(carphoto.EInvalidParams, "field %q is longer than %d bytes", name, limit)
			}
			continue
		}
		switch name {
		case "image":
			up.image, up.hasImage = data, true
		case "logo":
			up.logo, up.hasLogo = data, true
		case "backgroundImage":
			up.backdrop, up.hasBackdrop = data, true
		default:
			up.values[name] = strings.TrimSpace(string(data))
		}
	}
	if _, hasURL := up.values["imageUrl"]; (up.hasImage || hasURL) && invalid != nil {
		return nil, invalid
	}
	return up, nil
}

// uploadTimedOut is the answer to a body still arriving at UploadTimeout.
func (s *Server) uploadTimedOut(err error) error {
	return carphoto.Wrap(err, carphoto.ERequestTimeout, fmt.Sprintf(
		"the upload did not arrive within %v; you were not charged, please retry", s.cfg.UploadTimeout))
}

func tooLarge(what string, limit int64) error {
	return carphoto.Errorf(carphoto.EPayloadTooLarge, "%s is larger than the upload limit of %s", what, humanBytes(limit))
}

func humanBytes(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// requestStart is when the request arrived; its deadline counts from here.
func requestStart(c echo.Context) time.Time {
	if t, ok := c.Get(ctxStart).(time.Time); ok {
		return t
	}
	return time.Now()
}
