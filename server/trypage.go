package server

import (
	"bytes"
	"html"
	"net/http"

	"github.com/labstack/echo/v4"

	"carphoto/metrics"
	"carphoto/site"
)

// keyInput is the try-it page's API key field, as site/index.html writes it.
const keyInput = `<input id="key" `

// tryPage serves the try-it page. In the zero-setup mode its key field
// comes filled with the demo key, for a visitor on this machine only: that
// mode listens on every interface, and a neighbour on the network must not
// be handed a funded key. A request through a proxy (one that names its
// client) is not taken for a local one even when the proxy is local.
func (s *Server) tryPage() echo.HandlerFunc {
	plain := page(site.TryPage)
	if s.cfg.DemoKey == "" {
		return plain
	}
	filled := page(bytes.Replace(site.TryPage, []byte(keyInput),
		[]byte(keyInput+`value="`+html.EscapeString(s.cfg.DemoKey)+`" `), 1))
	return func(c echo.Context) error {
		if !local(c.Request()) {
			return plain(c)
		}
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		return filled(c)
	}
}

// local reports whether r came straight from a loopback address.
func local(r *http.Request) bool {
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	return metrics.Loopback(r)
}
