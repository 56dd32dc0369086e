package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"carphoto"
	"carphoto/billing"
	"carphoto/jobs"
)

// canvasFields are car-cutout's and car-shadow's framing fields, which a
// backdrop replaces: the answer is the backdrop at its own size.
var canvasFields = []string{"crop", "padding", "aspect", "background"}

// backdropSource names car-cutout's and car-shadow's backdrop.
var backdropSource = imageSource{file: "backgroundImage", id: "backgroundAssetId", url: "backgroundUrl"}

// placementFields place the car on a backdrop.
var placementFields = []string{"floorY", "scale", "centerX"}

// parseBackdrop reads car-cutout's and car-shadow's backdrop: at most one
// of backgroundImage (a file), backgroundUrl and backgroundAssetId, and
// where the car stands on it (floorY, scale, centerX, defaults filled in).
// assetID is the backgroundAssetId, for the caller to resolve in the
// account's library; a URL is only checked here, and fetched last.
func parseBackdrop(up *upload, p *jobs.Params) (backdrop bool, assetID string, err error) {
	v := up.values
	n, assetID, err := backdropSource.pick(up.values, up.hasBackdrop)
	if n == 0 {
		if sent := sentFields(v, placementFields); len(sent) > 0 {
			return false, "", carphoto.Errorf(carphoto.EInvalidParams,
				"%s place the car on a backdrop: send one in backgroundImage (a file), backgroundUrl or backgroundAssetId, or leave them out", strings.Join(sent, ", "))
		}
		return false, "", nil
	}
	if n > 1 {
		return false, "", carphoto.Errorf(carphoto.EInvalidParams,
			"send at most one backdrop: backgroundImage (a file), backgroundUrl or backgroundAssetId, not several")
	}
	if err != nil {
		return false, "", err
	}
	if sent := sentFields(v, canvasFields); len(sent) > 0 {
		verb := "does"
		if len(sent) > 1 {
			verb = "do"
		}
		return false, "", carphoto.Errorf(carphoto.EInvalidParams,
			"%s %s not apply with a backdrop: the answer is the backdrop at its own size, the car placed on it by floorY, scale and centerX; leave %s out",
			strings.Join(sent, ", "), verb, strings.Join(sent, ", "))
	}
	for _, f := range []struct {
		name   string
		to     *float64
		def    float64
		lo, hi float64
	}{
		{"floorY", &p.FloorY, 0.85, 0.1, 1},
		{"scale", &p.Scale, 0.8, 0.05, 1},
		{"centerX", &p.CenterX, 0.5, 0, 1},
	} {
		*f.to = f.def
		s := v[f.name]
		if s == "" {
			continue
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || !(x >= f.lo && x <= f.hi) {
			return false, "", carphoto.Errorf(carphoto.EInvalidParams, "%s must be a number from %g to %g, not %q", f.name, f.lo, f.hi, s)
		}
		*f.to = x
	}
	return true, assetID, nil
}

// sentFields are the names of fields that were sent with a value.
func sentFields(v map[string]string, names []string) []string {
	var sent []string
	for _, name := range names {
		if v[name] != "" {
			sent = append(sent, name)
		}
	}
	return sent
}

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
// MaxBackdropPixels from its header: the answer is the backdrop's size,
// so this bounds the work.
func (s *Server) checkBackdrop(field string, data []byte) (width, height int, err error) {
	width, height, err = s.checkHeader(field, data)
	if err != nil {
		return 0, 0, err
	}
	limit := s.cfg.MaxBackdropPixels
	if limit <= 0 {
		limit = billing.DefaultMaxBackdropPixels
	}
	if width*height > limit {
		return 0, 0, carphoto.Errorf(carphoto.EInvalidParams,
			"%s: the backdrop is %d×%d pixels (%s); a backdrop may have at most %s: scale it down",
			field, width, height, mp(width*height), mp(limit))
	}
	return width, height, nil
}

// mp writes a pixel count in megapixels.
func mp(pixels int) string {
	return fmt.Sprintf("%.1f MP", float64(pixels)/1e6)
}
