package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"carphoto"
	"carphoto/billing"
	"carphoto/imageops"
)

// readAsset reads an asset upload's body (readForm): one image in the
// file field "file", at most limit bytes, and the field "kind"
// (billing.AssetDesign when not sent), within UploadTimeout as a photo
// call's body is (or the request's deadline, if sooner).
func (s *Server) readAsset(c echo.Context, limit int64, deadline time.Time) (filename, kind string, data []byte, err error) {
	f := form{endpoint: "POST /v1/assets", fields: []string{"file", "kind"}, files: map[string]int64{"file": limit},
		slack: multipartSlack, timeout: s.cfg.UploadTimeout}
	var p *formParts
	err = uploading(c, s.cfg.UploadTimeout, deadline, func() (err error) {
		p, err = readForm(c.Response().Writer, c.Request(), f)
		return err
	})
	switch {
	case err != nil:
		return "", "", nil, err
	case !p.has("file"):
		return "", "", nil, carphoto.Errorf(carphoto.EInvalidParams, "send the image as a multipart/form-data file field named \"file\"")
	case p.invalid != nil:
		return "", "", nil, p.invalid
	}
	kind = billing.AssetDesign
	if k, ok := p.values["kind"]; ok {
		kind = k
	}
	return p.names["file"], kind, p.files["file"], nil
}

// enterAsset takes one of the key's MAX_IN_FLIGHT_PER_KEY slots for an
// asset upload, as a photo call does (enter): a key's uploads at once are
// bounded, so is the memory they hold. ctx carries the request's
// deadline; a key whose slots stay busy until then is 503, retry shortly.
func (s *Server) enterAsset(c echo.Context) (ctx context.Context, leave func(), err error) {
	deadline := requestStart(c).Add(s.cfg.RequestTimeout)
	ctx, cancel := context.WithDeadline(c.Request().Context(), deadline)
	left, err := s.enter(ctx, c)
	if carphoto.ErrorCode(err) == carphoto.EProcessingFailed {
		// Nothing was processed: the key's slots stayed busy.
		err = carphoto.Wrap(err, carphoto.EUnavailable, fmt.Sprintf(
			"this API key's earlier calls kept its %d slots busy: the upload did not start within %v; retry shortly",
			s.billing.Config().MaxInFlightPerKey, s.cfg.RequestTimeout))
	}
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return ctx, func() { left(); cancel() }, nil
}

// checkAssetSize holds a saved design or backdrop, by the size in its
// record, to the bounds a file sent with the call is held to (checkHeader,
// checkBackdrop): the limits may have been lowered since it was saved.
func (s *Server) checkAssetSize(field string, ref billing.AssetRef, backdrop bool) error {
	if err := s.limits().Check(ref.Width, ref.Height); err != nil {
		var e *carphoto.Error
		if errors.As(err, &e) {
			return &carphoto.Error{Code: e.Code, Message: field + ": " + e.Message, Err: e.Err}
		}
		return err
	}
	if !backdrop {
		return nil
	}
	limit := s.cfg.MaxBackdropPixels
	if limit <= 0 {
		limit = billing.DefaultMaxBackdropPixels
	}
	limit = min(limit, imageops.MaxCanvasPixels)
	if ref.Width*ref.Height > limit {
		return carphoto.Errorf(carphoto.EInvalidParams,
			"%s: the backdrop is %d×%d pixels (%.1f MP); a backdrop may have at most %.1f MP: scale it down",
			field, ref.Width, ref.Height, float64(ref.Width*ref.Height)/1e6, float64(limit)/1e6)
	}
	return nil
}
