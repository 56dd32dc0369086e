package server

import (
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
// and its parameters (imageops.ParamNames); anything else is refused so a
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
	return append(names, imageops.ParamNames(op)...)
}

// maxFieldBytes caps a text field; the longest legitimate one is an asset id.
const maxFieldBytes = 1024

// readUpload is parseUpload within UploadTimeout: the connection's read
// deadline is set to UploadTimeout from now (the request's turn, after any
// wait for its key's slot), within the request's deadline, so a stalled or
// trickling upload ends as 408 request_timeout at that time, and the
// connection is closed (endUpload). A photo or design sent by URL is
// fetched once the body is read and the deadline cleared, within its own
// UploadTimeout (fetch).
func (s *Server) readUpload(c echo.Context, op imageops.Op, deadline time.Time) (jobs.Request, assetIDs, error) {
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
		return jobs.Request{Params: imageops.Params{Op: op}}, assetIDs{}, err
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

// parseUpload reads the multipart body part by part, capping every part
// while reading, then checks it (checkUpload).
func (s *Server) parseUpload(c echo.Context, op imageops.Op) (req jobs.Request, ids assetIDs, err error) {
	up, err := s.readMultipart(c.Response().Writer, c.Request(), op)
	if err != nil {
		return jobs.Request{Params: imageops.Params{Op: op}}, assetIDs{}, err
	}
	return s.checkUpload(c.Request().Context(), op, up)
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
	// Its files (a photo and a design or backdrop, or both with plates=logo
	// on a backdrop) plus some slack for fields and multipart framing. Past
	// it the server closes the connection after answering, so a client
	// cannot keep streaming.
	r.Body = http.MaxBytesReader(w, r.Body, int64(uploadFiles(op))*s.cfg.MaxUploadBytes+1<<20)
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
		data, fatal, bad := s.readField(part, name)
		if fatal != nil {
			return nil, fatal
		}
		if bad != nil {
			if invalid == nil {
				invalid = bad
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

// readField reads one part of a photo call's body, capped while reading: a
// file at MaxUploadBytes, a URL at maxURLBytes, any other field at
// maxFieldBytes. fatal ends the reading (a file or body past its limit, the
// upload's deadline); bad is a problem with this field alone, answered
// once the whole body is read.
func (s *Server) readField(part *multipart.Part, name string) (data []byte, fatal, bad error) {
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
			return nil, tooLarge("request body", s.cfg.MaxUploadBytes), nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, s.uploadTimedOut(err), nil
		}
		return nil, nil, carphoto.Wrap(err, carphoto.EInvalidParams, "could not read field "+strconv.Quote(name)+": the upload was cut short")
	}
	if int64(len(data)) > limit {
		if name == "image" || name == "logo" || name == "backgroundImage" {
			return nil, tooLarge(name, s.cfg.MaxUploadBytes), nil
		}
		return nil, nil, carphoto.Errorf(carphoto.EInvalidParams, "field %q is longer than %d bytes", name, limit)
	}
	return data, nil, nil
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
