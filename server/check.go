package server

import (
	"context"

	"carphoto"
	"carphoto/imageops"
	"carphoto/jobs"
)

// logoSource names plate-logo's design and logo-overlay's logo.
var logoSource = imageSource{file: "logo", id: "logoAssetId", url: "logoUrl"}

// checkUpload validates the fields in the spec's order: a missing image
// first, then any invalid parameter (parseParams); only then are
// imageUrl, logoUrl and backgroundUrl fetched, and the images' headers
// checked. ids are the logoAssetId and backgroundAssetId sent, for the
// caller to resolve in the account's library.
func (s *Server) checkUpload(ctx context.Context, op imageops.Op, up *upload) (req jobs.Request, ids assetIDs, err error) {
	req.Params.Op = op
	v := up.values
	imageURL, hasURL := v["imageUrl"]
	switch {
	case !up.hasImage && !hasURL:
		return req, ids, carphoto.Errorf(carphoto.EMissingImage,
			"image missing: send the photo as a multipart/form-data file field named \"image\", or its address in the field \"imageUrl\"")
	case up.hasImage && hasURL:
		return req, ids, carphoto.Errorf(carphoto.EInvalidParams, "send exactly one of image (a file) or imageUrl, not both")
	}
	var backdrops int
	var pickErr error
	if op == imageops.CarShadow || op == imageops.CarCutout {
		backdrops, ids.backdrop, pickErr = backdropSource.pick(v, up.hasBackdrop)
	}
	if req.Params, err = parseParams(op, v, backdrops > 0); err != nil {
		return req, ids, err
	}
	switch {
	case backdrops > 1:
		return req, ids, carphoto.Errorf(carphoto.EInvalidParams,
			"send at most one backdrop: backgroundImage (a file), backgroundUrl or backgroundAssetId, not several")
	case pickErr != nil:
		return req, ids, pickErr
	}
	needsDesign := req.Params.NeedsDesign()
	if err := studioDesignSent(req.Params, v, up.hasLogo); err != nil {
		return req, ids, err
	}
	if needsDesign {
		n, id, err := logoSource.pick(v, up.hasLogo)
		switch {
		case n > 1:
			return req, ids, carphoto.Errorf(carphoto.EInvalidParams, "send exactly one of logo (a file), logoAssetId or logoUrl, not several")
		case n == 0 && req.Params.Plates == imageops.PlatesLogo:
			return req, ids, carphoto.Errorf(carphoto.EInvalidParams, "plates=logo puts your design on the plates: send exactly one of logo (a file), logoAssetId or logoUrl")
		case n == 0:
			return req, ids, carphoto.Errorf(carphoto.EInvalidParams, "send exactly one of logo (a file), logoAssetId or logoUrl")
		case err != nil:
			return req, ids, err
		}
		ids.design = id
	}

	field := "image"
	if hasURL {
		field = "imageUrl"
		if up.image, err = s.fetch(ctx, field, imageURL); err != nil {
			return req, ids, err
		}
	}
	width, height, err := s.checkHeader(field, up.image)
	if err != nil {
		return req, ids, err
	}
	req.Photo = up.image
	if err := imageops.CheckCanvas(req.Params, width, height, s.limits()); err != nil {
		return req, ids, err
	}
	if req.Params.Backdrop != nil && ids.backdrop == "" {
		if req.Backdrop, err = s.backdropOf(ctx, up); err != nil {
			return req, ids, err
		}
	}
	if needsDesign && ids.design == "" {
		field, data, err := s.sourceData(ctx, logoSource, v, up.logo, up.hasLogo)
		if err != nil {
			return req, ids, err
		}
		if _, _, err := s.checkHeader(field, data); err != nil {
			return req, ids, err
		}
		req.Design = data
	}
	return req, ids, nil
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
