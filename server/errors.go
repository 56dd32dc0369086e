package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"carphoto"
)

// statuses is the one map from error code to HTTP status.
var statuses = map[string]int{
	carphoto.EInvalidAPIKey:        http.StatusUnauthorized,
	carphoto.EInsufficientCredits:  http.StatusPaymentRequired,
	carphoto.ERateLimited:          http.StatusTooManyRequests,
	carphoto.EUnknownTool:          http.StatusBadRequest,
	carphoto.EMissingImage:         http.StatusBadRequest,
	carphoto.EInvalidParams:        http.StatusBadRequest,
	carphoto.EProcessingFailed:     http.StatusInternalServerError,
	carphoto.EPayloadTooLarge:      http.StatusRequestEntityTooLarge,
	carphoto.EPlateNotFound:        http.StatusUnprocessableEntity,
	carphoto.ECarNotFound:          http.StatusUnprocessableEntity,
	carphoto.ECarTruncated:         http.StatusUnprocessableEntity,
	carphoto.ECarOccluded:          http.StatusUnprocessableEntity,
	carphoto.ENotFound:             http.StatusNotFound,
	carphoto.EMethodNotAllowed:     http.StatusMethodNotAllowed,
	carphoto.EUnavailable:          http.StatusServiceUnavailable,
	carphoto.EInternal:             http.StatusInternalServerError,
	carphoto.EAssetLimitReached:    http.StatusConflict,
	carphoto.ERequestTimeout:       http.StatusRequestTimeout,
	carphoto.ERequestInProgress:    http.StatusConflict,
	carphoto.EIdempotencyKeyReused: http.StatusUnprocessableEntity,
	carphoto.ERangeNotSatisfiable:  http.StatusRequestedRangeNotSatisfiable,
	carphoto.EPreconditionFailed:   http.StatusPreconditionFailed,
}

// errorBody is the JSON shape of every failure.
type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// handleError is Echo's HTTPErrorHandler: every failure leaves as JSON
// {error, code}. Causes are logged here, once, and never sent.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && !isCarphotoError(err) {
		err = fromEcho(he, c)
	}
	code := carphoto.ErrorCode(err)
	status, ok := statuses[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	msg := carphoto.ErrorMessage(err)
	if status >= 500 {
		logFor(c).Error().Err(err).Str("code", code).Msg("request failed")
	} else {
		logFor(c).Debug().Err(err).Str("code", code).Msg("request refused")
	}
	c.Set(ctxErrorCode, code)
	challenged(c, status)
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, errorBody{Error: msg, Code: code})
}

func isCarphotoError(err error) bool {
	var e *carphoto.Error
	return errors.As(err, &e)
}

// fromEcho maps Echo's own errors (routing, body limits) onto our codes.
func fromEcho(he *echo.HTTPError, c echo.Context) error {
	r := c.Request()
	switch he.Code {
	case http.StatusNotFound:
		return carphoto.Errorf(carphoto.ENotFound, "no route %s %s; the API lives under /v1", r.Method, r.URL.Path)
	case http.StatusMethodNotAllowed:
		// Echo's router has set Allow to the methods the path takes.
		return carphoto.Errorf(carphoto.EMethodNotAllowed, "method %s is not allowed on %s; it takes %s",
			r.Method, r.URL.Path, c.Response().Header().Get(echo.HeaderAllow))
	case http.StatusRequestEntityTooLarge:
		return carphoto.Errorf(carphoto.EPayloadTooLarge, "request body too large")
	case http.StatusUnauthorized:
		return carphoto.Errorf(carphoto.EInvalidAPIKey, "missing or invalid API key")
	}
	if he.Code >= 400 && he.Code < 500 {
		return carphoto.Wrap(he, carphoto.EInvalidParams, "bad request")
	}
	return carphoto.Wrap(he, carphoto.EInternal, "internal error")
}
