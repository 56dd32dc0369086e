package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"carphoto"
	"carphoto/billing"
	"carphoto/imageops"
	"carphoto/jobs"
)

// car-shadow and car-cutout as one call for a listing photo:
// the plates hidden on the photo first (plates, with logo, logoAssetId or
// logoUrl for plates=logo), the sides that cut the car off named, and the
// car's scale on a backdrop.

// The studio answers' headers: the sides of the photo that cut the car
// off (comma-separated, only when some do), what stands in front of the
// car and was cut out of it (occludedByPerson, only when someone does), and
// the car's width as a share of the answer's on a backdrop (always there).
const (
	headerCarTruncated = "X-Car-Truncated"
	headerCarOccluded  = "X-Car-Occluded"
	headerCarScale     = "X-Car-Scale"

	occludedByPerson = "person"
)

// assetIDs are the saved assets a photo call names: its design
// (logoAssetId) and its backdrop (backgroundAssetId).
type assetIDs struct{ design, backdrop string }

// one is the asset id of a call that names at most one (the backdrop when
// it names both): what a call's idempotency record and logs name.
func (ids assetIDs) one() string {
	if ids.backdrop != "" {
		return ids.backdrop
	}
	return ids.design
}

// secondImage is the call's second image sent with it: its backdrop, else
// its design.
func secondImage(req jobs.Request) []byte {
	if req.Backdrop != nil {
		return req.Backdrop
	}
	return req.Design
}

// useAssets points the call at the design and backdrop saved in the
// caller's Assets library (useAsset): the backdrop, or the design of a
// call without one, as the task's Asset; the design of a call that also
// has a backdrop as its DesignAsset.
func (s *Server) useAssets(ctx context.Context, account string, ids assetIDs, req *jobs.Request) error {
	if ids.backdrop != "" {
		key, err := s.useAsset(ctx, account, ids.backdrop, true)
		if err != nil {
			return err
		}
		req.Asset = key
	}
	if ids.design != "" {
		key, err := s.useAsset(ctx, account, ids.design, false)
		if err != nil {
			return err
		}
		if req.Params.Backdrop != nil {
			req.DesignAsset = key
		} else {
			req.Asset = key
		}
	}
	return nil
}

// studioDesignSent refuses a design sent to car-shadow or car-cutout
// without plates=logo: it would be ignored.
func studioDesignSent(p imageops.Params, v map[string]string, hasLogo bool) error {
	if (p.Op != imageops.CarShadow && p.Op != imageops.CarCutout) || p.Plates == imageops.PlatesLogo {
		return nil
	}
	_, hasID := v[logoSource.id]
	_, hasURL := v[logoSource.url]
	if hasLogo || hasID || hasURL {
		return carphoto.Errorf(carphoto.EInvalidParams,
			"logo, logoAssetId and logoUrl put a design on the plates, with plates=logo: send plates=logo, or leave them out")
	}
	return nil
}

// callOf is what a call is priced and held as: its operation, and with
// plates hidden on car-shadow or car-cutout the plate operation too.
func callOf(p imageops.Params) billing.Call {
	return billing.Call{Op: string(p.Op), PlateOp: string(p.PlateOp())}
}

// studioHeaders sets a studio answer's headers: X-Plates-Found when the
// call hid plates, X-Car-Truncated when the photo's edge cuts the car off,
// X-Car-Occluded when a person standing in front of the car was cut out of
// it, X-Car-Scale on a backdrop.
func studioHeaders(h http.Header, p imageops.Params, res *jobs.Result) {
	if p.Op != imageops.CarShadow && p.Op != imageops.CarCutout {
		return
	}
	if p.Plates != imageops.PlatesKeep {
		h.Set("X-Plates-Found", strconv.Itoa(res.PlatesFound))
	}
	if p.Plates == imageops.PlatesLogo {
		h.Set(headerPlatesDesigned, strconv.Itoa(res.PlatesDesigned))
	}
	if len(res.CarTruncated) > 0 {
		h.Set(headerCarTruncated, strings.Join(res.CarTruncated, ","))
	}
	if res.CarOccluded {
		h.Set(headerCarOccluded, occludedByPerson)
	}
	if p.Backdrop != nil {
		h.Set(headerCarScale, strconv.FormatFloat(res.CarScale, 'f', 3, 64))
	}
}
