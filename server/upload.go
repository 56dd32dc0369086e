package server

import (
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"carphoto"
	"carphoto/imageops"
	"carphoto/jobs"
)

// upload is a parsed photo request.
type upload struct {
	image, logo, backdrop          []byte
	hasImage, hasLogo, hasBackdrop bool
	values                         map[string]string
}

// acceptedFields are the multipart fields op accepts: its images' fields
// and its parameters (paramNamesOf); anything else is refused so a
// misspelt option never passes silently.
func acceptedFields(op imageops.Op) []string {
	names := []string{"image", "imageUrl"}
	switch op {
	case imageops.PlateLogo, imageops.LogoOverlay:
		names = append(names, "logo", "logoAssetId", "logoUrl")
	case imageops.CarShadow, imageops.CarCutout:
		// The design is for plates=logo (studio.go).
		names = append(names, "backgroundImage", "backgroundUrl", "backgroundAssetId", "logo", "logoAssetId", "logoUrl")
	}
	return append(names, paramNamesOf(op)...)
}

// maxFieldBytes caps a text field; the longest legitimate one is an asset id.
const maxFieldBytes = 1024

// readUpload reads a photo call's body within UploadTimeout, then checks
// it (checkUpload). The connection's read deadline is UploadTimeout from
// now (the request's turn, after any wait for its key's slot), within the
// request's deadline, so a stalled or trickling upload ends as 408
// request_timeout at that time, and the connection is closed (uploading).
// A photo or design sent by URL is fetched once the body is read and the
// deadline cleared, within its own UploadTimeout (fetch).
func (s *Server) readUpload(c echo.Context, op imageops.Op, deadline time.Time) (jobs.Request, assetIDs, error) {
	var up *upload
	read := func() (err error) {
		up, err = s.readMultipart(c.Response().Writer, c.Request(), op)
		return err
	}
	// Where the call's deadline comes before UploadTimeout (its wait for
	// the key's slot took the rest), a read cut at it is the deadline's
	// answer, not 408: the upload may well have arrived.
	bounded := !deadline.IsZero() && deadline.Before(time.Now().Add(s.cfg.UploadTimeout))
	if err := uploading(c, s.cfg.UploadTimeout, deadline, read); err != nil {
		if bounded && carphoto.ErrorCode(err) == carphoto.ERequestTimeout {
			err = s.overDeadline(err)
		}
		return jobs.Request{Params: imageops.Params{Op: op}}, assetIDs{}, err
	}
	return s.checkUpload(c.Request().Context(), op, up)
}

// formSlack is what a photo call's body may carry beyond its files.
const formSlack = 1 << 20

// photoFiles are a photo call's file fields.
var photoFiles = []string{"image", "logo", "backgroundImage"}

// readMultipart reads a photo call's body (readForm): each file at most
// MaxUploadBytes. A problem with one field is answered only once the body
// is known to hold a photo (image or imageUrl), so missing_image is said
// first.
func (s *Server) readMultipart(w http.ResponseWriter, r *http.Request, op imageops.Op) (*upload, error) {
	f := form{endpoint: string(op), fields: acceptedFields(op), files: map[string]int64{},
		slack: formSlack, timeout: s.cfg.UploadTimeout, sizeHint: r.ContentLength}
	// The photo, and a design or backdrop where the operation takes one
	// (car-shadow and car-cutout both, with plates=logo on a backdrop).
	for _, name := range photoFiles {
		if slices.Contains(f.fields, name) {
			f.files[name] = s.cfg.MaxUploadBytes
		}
	}
	p, err := readForm(w, r, f)
	if err != nil {
		return nil, err
	}
	up := &upload{values: p.values}
	up.image, up.hasImage = p.files["image"], p.has("image")
	up.logo, up.hasLogo = p.files["logo"], p.has("logo")
	up.backdrop, up.hasBackdrop = p.files["backgroundImage"], p.has("backgroundImage")
	if _, hasURL := up.values["imageUrl"]; (up.hasImage || hasURL) && p.invalid != nil {
		return nil, p.invalid
	}
	return up, nil
}
