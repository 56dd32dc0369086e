package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"carphoto/site"
)

// pagePolicy lets the pages load only what this server serves: the
// browser refuses any CDN, font host or beacon, so "nothing at run time
// from elsewhere" holds by construction. Redoc styles with inline styles
// and runs its search in a blob: worker; the try-it page shows results as
// blob: images.
const pagePolicy = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; " +
	"worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// openapi serves the OpenAPI document of the public API.
func (s *Server) openapi(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, site.OpenAPI)
}

// page serves one embedded HTML page under pagePolicy.
func page(html []byte) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", pagePolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		return c.Blob(http.StatusOK, echo.MIMETextHTMLCharsetUTF8, html)
	}
}

// script serves one embedded script; it changes only with the binary.
func script(js []byte) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=3600")
		return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", js)
	}
}
