package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"carphoto/billing"
	"carphoto/imageops"
)

// accountBody is GET /v1/account.
type accountBody struct {
	AccountID        string           `json:"accountId"`
	Name             string           `json:"name"`
	Credits          int64            `json:"credits"`
	CostPerOperation map[string]int64 `json:"costPerOperation"`
	// CostWithPlates is car-shadow's and car-cutout's price with the
	// plates hidden in the same call ("car-shadow+blur-plates", and with
	// plates=logo "car-shadow+plate-logo"): the two operations' prices.
	CostWithPlates map[string]int64 `json:"costWithPlates"`
	RateLimit      rateLimitBody    `json:"rateLimit"`
}

type rateLimitBody struct {
	Limit        int   `json:"limit"`
	Remaining    int   `json:"remaining"`
	ResetSeconds int64 `json:"resetSeconds"`
}

// getAccount serves GET /v1/account: the caller's balance, the price of
// each operation and the rate-limit state after this request.
func (s *Server) getAccount(c echo.Context) error {
	a, err := s.billing.Account(c.Request().Context(), accountID(c))
	if err != nil {
		return err
	}
	costs := make(map[string]int64, len(imageops.Ops)+1)
	for _, op := range imageops.Ops {
		costs[string(op)] = s.billing.Price(billing.Call{Op: string(op)})
	}
	if s.cfg.Video.Store != nil {
		// video-blur's price is per started 10 seconds of video.
		costs[string(imageops.VideoBlur)] = s.billing.VideoPrice(10)
	}
	withPlates := map[string]int64{}
	for _, op := range []imageops.Op{imageops.CarShadow, imageops.CarCutout} {
		for _, po := range []imageops.Op{imageops.BlurPlates, imageops.PlateLogo} {
			call := billing.Call{Op: string(op), PlateOp: string(po)}
			withPlates[call.Name()] = s.billing.Price(call)
		}
	}
	rl, _ := c.Get(ctxRateLimit).(billing.RateLimit)
	return c.JSON(http.StatusOK, accountBody{
		AccountID:        a.ID,
		Name:             a.Name,
		Credits:          a.Credits,
		CostPerOperation: costs,
		CostWithPlates:   withPlates,
		RateLimit:        rateLimitBody{Limit: rl.Limit, Remaining: rl.Remaining, ResetSeconds: ceilSeconds(rl.ResetAfter)},
	})
}
