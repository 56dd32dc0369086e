package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"carphoto/billing"
)

// multipartSlack is what a multipart body may carry beyond the file itself:
// boundaries, part headers, a file name.
const multipartSlack = 64 << 10

// createAsset serves POST /v1/assets: one PNG, JPEG or WebP image in the
// multipart file field "file", of the kind in the field "kind" (a plate
// design, the default, or a backdrop), saved to the caller's Assets
// library (the image in the asset store, its record in Redis). Free, but
// counted by the rate limit like every /v1 call, and by the key's
// in-flight cap and UPLOAD_TIMEOUT like a photo call.
func (s *Server) createAsset(c echo.Context) error {
	ctx, leave, err := s.enterAsset(c)
	if err != nil {
		return err
	}
	defer leave()
	cfg := s.billing.Config()
	// The kind may come after the file: read up to the larger limit, and
	// hold the file to its kind's in CreateAsset.
	deadline, _ := ctx.Deadline()
	name, kind, data, err := s.readAsset(c, max(cfg.MaxAssetBytes, cfg.MaxBackdropBytes), deadline)
	if err != nil {
		return err
	}
	if err := s.billing.CheckAssetBytes(kind, int64(len(data))); err != nil {
		return err
	}
	// An asset is held to a photo's bounds (pixels, sides, shape) from its
	// header, as an uploaded logo is: a 59999999×1 strip saved here would
	// cost gigabytes at every call that uses it.
	if _, _, err := s.checkHeader("file", data); err != nil {
		return err
	}
	a, err := s.billing.CreateAsset(ctx, accountID(c), kind, name, data)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/assets/"+a.ID)
	return c.JSON(http.StatusCreated, a)
}

// assetsBody is GET /v1/assets.
type assetsBody struct {
	Assets []billing.Asset `json:"assets"`
}

// listAssets serves GET /v1/assets: the caller's library, oldest first.
func (s *Server) listAssets(c echo.Context) error {
	list, err := s.billing.Assets(c.Request().Context(), accountID(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, assetsBody{Assets: list})
}

// getAsset serves GET /v1/assets/{id}: one asset's metadata. Another
// account's id is 404 like an unknown one.
func (s *Server) getAsset(c echo.Context) error {
	a, err := s.billing.Asset(c.Request().Context(), accountID(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

// deleteAsset serves DELETE /v1/assets/{id}.
func (s *Server) deleteAsset(c echo.Context) error {
	if err := s.billing.DeleteAsset(c.Request().Context(), accountID(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
