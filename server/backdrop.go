package server

import (
	"context"

	"carphoto/billing"
	"carphoto/imageops"
)

// backdropSource names car-cutout's and car-shadow's backdrop.
var backdropSource = imageSource{file: "backgroundImage", id: "backgroundAssetId", url: "backgroundUrl"}

// backdropOf is the backdrop sent as a file or fetched from
// backgroundUrl, its header checked (checkBackdrop).
func (s *Server) backdropOf(ctx context.Context, up *upload) ([]byte, error) {
	field, data, err := s.sourceData(ctx, backdropSource, up.values, up.backdrop, up.hasBackdrop)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.checkBackdrop(field, data); err != nil {
		return nil, err
	}
	return data, nil
}

// checkBackdrop holds a backdrop to a photo's bounds and to
// MaxBackdropPixels from its header (imageops.CheckBackdrop): the answer is
// the backdrop's size, so this bounds the work.
func (s *Server) checkBackdrop(field string, data []byte) (width, height int, err error) {
	limit := s.cfg.MaxBackdropPixels
	if limit <= 0 {
		limit = billing.DefaultMaxBackdropPixels
	}
	return imageops.CheckBackdrop(field, data, s.limits(), limit)
}
