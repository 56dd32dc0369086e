package server

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// acceptFormats are the image types a photo answer can be, by the format
// field's value each stands for.
var acceptFormats = map[string]string{"image/jpeg": "jpeg", "image/png": "png", "image/webp": "webp"}

// acceptedFormat is the format a photo call's Accept asks for when its
// format field is absent: the image type we serve it names with the
// highest q (the first of equals), or "" for the operation's default. A
// wildcard (*/*, image/*), application/json or an absent Accept names
// none: the contract's default stands, and nothing is ever 406.
func acceptedFormat(h http.Header) string {
	best, bestQ := "", 0.0
	for _, v := range h.Values(echo.HeaderAccept) {
		for _, r := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
			if err != nil {
				continue
			}
			format, ok := acceptFormats[mt]
			if !ok {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(s, 64); err != nil {
					continue
				}
			}
			if q > bestQ {
				best, bestQ = format, q
			}
		}
	}
	return best
}
