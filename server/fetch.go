package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"carphoto"
	"carphoto/internal/netguard"
)

// maxRedirects is how many redirects a photo fetched by URL may follow.
const maxRedirects = 5

// maxURLBytes caps imageUrl and logoUrl: signed CDN links run long.
const maxURLBytes = 4096

// newFetchClient is the client imageUrl and logoUrl are fetched with: it
// dials only what g allows (every redirect's address is checked again when
// dialled), follows at most maxRedirects redirects, and only to http or
// https.
func newFetchClient(g netguard.Guard) *http.Client {
	return &http.Client{
		Transport: g.Transport(5 * time.Second),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return errTooManyRedirects
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return errRedirectScheme
			}
			return nil
		},
	}
}

var (
	errTooManyRedirects = fmt.Errorf("more than %d redirects", maxRedirects)
	errRedirectScheme   = errors.New("a redirect to an address that is not http or https")
)

// parseSourceURL refuses a URL the service would never fetch: not absolute
// http or https.
func parseSourceURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "%s must be an absolute http or https URL, not %q", field, raw)
	}
	return u, nil
}

// fetch gets the image at raw (the field named field) within
// UploadTimeout and MaxUploadBytes, as an upload would be bounded: 408
// request_timeout and 413 payload_too_large past them. A source that
// cannot be reached, is not public, or answers other than 200 is 400
// invalid_params naming the field and what failed. Nothing here is
// charged: it runs before the credit hold.
func (s *Server) fetch(ctx context.Context, field, raw string) ([]byte, error) {
	u, err := parseSourceURL(field, raw)
	if err != nil {
		return nil, err
	}
	if s.cfg.UploadTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.UploadTimeout)
		defer cancel()
	}
	timedOut := func(err error) error {
		return carphoto.Wrap(err, carphoto.ERequestTimeout, fmt.Sprintf(
			"%s: the source did not send the image within %v; you were not charged", field, s.cfg.UploadTimeout))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, carphoto.Wrap(err, carphoto.EInvalidParams, field+": not a URL the service can fetch")
	}
	req.Header.Set("Accept", "image/*")
	req.Header.Set("User-Agent", "carphoto (+imageUrl)")
	client := s.fetcher
	if client == nil {
		client = newFetchClient(netguard.Guard{AllowPrivate: s.cfg.AllowPrivateURLs})
	}
	res, err := client.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
			return nil, timedOut(err)
		case errors.Is(err, netguard.ErrBlocked):
			return nil, carphoto.Wrap(err, carphoto.EInvalidParams, field+
				": the URL (or a redirect) leads to a loopback, private, link-local or reserved address; only public addresses are fetched"+s.privateHint())
		case errors.Is(err, errTooManyRedirects):
			return nil, carphoto.Wrap(err, carphoto.EInvalidParams, field+": the source sent "+errTooManyRedirects.Error())
		case errors.Is(err, errRedirectScheme):
			return nil, carphoto.Wrap(err, carphoto.EInvalidParams, field+": the source sent "+errRedirectScheme.Error())
		}
		return nil, carphoto.Wrap(err, carphoto.EInvalidParams, field+": the source could not be reached ("+u.Host+")")
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, carphoto.Errorf(carphoto.EInvalidParams, "%s: the source answered %s, not 200 with an image", field, res.Status)
	}
	if res.ContentLength > s.cfg.MaxUploadBytes {
		return nil, tooLarge(field+"'s image", s.cfg.MaxUploadBytes)
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, s.cfg.MaxUploadBytes+1))
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return nil, timedOut(err)
	case err != nil:
		return nil, carphoto.Wrap(err, carphoto.EInvalidParams, field+": the source broke off while sending the image")
	case int64(len(data)) > s.cfg.MaxUploadBytes:
		return nil, tooLarge(field+"'s image", s.cfg.MaxUploadBytes)
	}
	return data, nil
}

// imageSource names the fields by which a call sends a second image (a
// plate design, a logo, a backdrop): a file, a saved asset's id or a URL.
type imageSource struct{ file, id, url string }

// pick counts the ways v (with hasFile for the file) names the image and,
// where it is exactly one, checks it: an asset id must not be empty, a URL
// must be one the service may fetch. assetID is that id when the image is
// a saved asset. The caller says what no way or several ways mean.
func (src imageSource) pick(v map[string]string, hasFile bool) (n int, assetID string, err error) {
	rawID, hasID := v[src.id]
	rawURL, hasURL := v[src.url]
	for _, has := range []bool{hasFile, hasID, hasURL} {
		if has {
			n++
		}
	}
	switch {
	case n != 1:
	case hasID && rawID == "":
		err = carphoto.Errorf(carphoto.EInvalidParams, "%s is empty", src.id)
	case hasID:
		assetID = rawID
	case hasURL:
		_, err = parseSourceURL(src.url, rawURL)
	}
	return n, assetID, err
}

// sourceData is the image sent as a file, or else fetched from its URL
// (within the upload's limits, through the address guard), with the name
// of the field it came by, for the caller's header check.
func (s *Server) sourceData(ctx context.Context, src imageSource, v map[string]string, file []byte, hasFile bool) (field string, data []byte, err error) {
	if hasFile {
		return src.file, file, nil
	}
	data, err = s.fetch(ctx, src.url, v[src.url])
	return src.url, data, err
}

// privateHint is what a refused private address adds in the zero-setup
// mode, where the caller runs the service on their own machine: how to let
// it fetch from there. A deployed service says nothing more.
func (s *Server) privateHint() string {
	if !s.cfg.ZeroSetup {
		return ""
	}
	return " (to fetch from your own machine or network while trying the service locally, restart it with ALLOW_PRIVATE_URLS=true)"
}
