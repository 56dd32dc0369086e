package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"carphoto"
)

// adminAuth lets through only requests bearing ADMIN_TOKEN, within the
// admin API's rate limit (429 rate_limited with Retry-After past it); an
// address past its budget of failed authentications gets 429 before its
// token is looked at. The token and
// the header are compared as SHA-256 digests in constant time, so neither
// their content nor their length leaks through timing.
func (s *Server) adminAuth(next echo.HandlerFunc) echo.HandlerFunc {
	want := sha256.Sum256([]byte(s.cfg.AdminToken))
	return func(c echo.Context) error {
		// An address that has failed too often may not try a token at all.
		if err := s.authBlocked(c); err != nil {
			return err
		}
		token, err := bearer(c.Request())
		got := sha256.Sum256([]byte(token))
		if err != nil || token == "" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return s.authFailed(c, carphoto.Errorf(carphoto.EInvalidAPIKey, "the admin API needs Authorization: Bearer <ADMIN_TOKEN>"))
		}
		// Responses carry API keys and balances: never cache them.
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		rl, err := s.billing.AllowAdmin(c.Request().Context())
		if err != nil {
			return err
		}
		if !rl.Allowed {
			retry := max(ceilSeconds(rl.RetryAfter), 1)
			c.Response().Header().Set("Retry-After", strconv.FormatInt(retry, 10))
			return carphoto.Errorf(carphoto.ERateLimited,
				"more than %d admin requests per minute; retry in %d s", rl.Limit, retry)
		}
		return next(c)
	}
}

// accountKeyBody is the answer of account creation and key rotation: the
// only time a key is shown.
type accountKeyBody struct {
	AccountID string `json:"accountId"`
	APIKey    string `json:"apiKey"`
	Credits   *int64 `json:"credits,omitempty"`
}

// adminAccountBody is an account as the dashboard sees it.
type adminAccountBody struct {
	AccountID string    `json:"accountId"`
	Name      string    `json:"name"`
	Credits   int64     `json:"credits"`
	CreatedAt time.Time `json:"createdAt"`
	HasKey    bool      `json:"hasKey"`
	KeyID     string    `json:"keyId,omitempty"`
}

// adminCreateAccount serves POST /admin/v1/accounts {"name", "credits"}.
func (s *Server) adminCreateAccount(c echo.Context) error {
	var in struct {
		Name    string `json:"name"`
		Credits int64  `json:"credits"`
	}
	if err := readJSON(c, &in, true); err != nil {
		return err
	}
	a, key, err := s.billing.CreateAccount(c.Request().Context(), in.Name, in.Credits)
	if err != nil {
		return err
	}
	logFor(c).Info().Str("account", a.ID).Str("key_id", a.KeyID).Int64("credits", a.Credits).Msg("admin: account created")
	return c.JSON(http.StatusCreated, accountKeyBody{AccountID: a.ID, APIKey: key, Credits: &a.Credits})
}

// adminShowAccount serves GET /admin/v1/accounts/{id}.
func (s *Server) adminShowAccount(c echo.Context) error {
	a, err := s.billing.Account(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, adminAccountBody{
		AccountID: a.ID, Name: a.Name, Credits: a.Credits, CreatedAt: a.CreatedAt, HasKey: a.KeyID != "", KeyID: a.KeyID,
	})
}

// adminRotateKey serves POST /admin/v1/accounts/{id}/keys/rotate.
func (s *Server) adminRotateKey(c echo.Context) error {
	id := c.Param("id")
	key, err := s.billing.RotateKey(c.Request().Context(), id)
	if err != nil {
		return err
	}
	logFor(c).Info().Str("account", id).Msg("admin: key rotated")
	return c.JSON(http.StatusOK, accountKeyBody{AccountID: id, APIKey: key})
}

// adminRevokeKey serves POST /admin/v1/accounts/{id}/keys/revoke.
func (s *Server) adminRevokeKey(c echo.Context) error {
	id := c.Param("id")
	if err := s.billing.RevokeKey(c.Request().Context(), id); err != nil {
		return err
	}
	logFor(c).Info().Str("account", id).Msg("admin: key revoked")
	return c.JSON(http.StatusOK, map[string]any{"accountId": id, "revoked": true})
}

// adminAddCredits serves POST /admin/v1/accounts/{id}/credits {"amount": N};
// a negative amount takes credits back. It answers with the new balance.
func (s *Server) adminAddCredits(c echo.Context) error {
	var in struct {
		Amount *int64 `json:"amount"`
	}
	if err := readJSON(c, &in, false); err != nil {
		return err
	}
	if in.Amount == nil {
		return carphoto.Errorf(carphoto.EInvalidParams, "send {\"amount\": N}, N a non-zero integer")
	}
	id := c.Param("id")
	bal, err := s.billing.AddCredits(c.Request().Context(), id, *in.Amount, requestIDOf(c))
	if err != nil {
		return err
	}
	logFor(c).Info().Str("account", id).Int64("amount", *in.Amount).Int64("credits", bal).Msg("admin: credits changed")
	return c.JSON(http.StatusOK, map[string]any{"accountId": id, "credits": bal})
}

// ledgerEntryBody is one ledger line as the dashboard sees it.
type ledgerEntryBody struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	RequestID string `json:"requestId"`
	// ClientRequestID is the client's own X-Request-Id, on a hold's line.
	ClientRequestID string    `json:"clientRequestId,omitempty"`
	Op              string    `json:"op,omitempty"`
	Amount          int64     `json:"amount"`
	Delta           int64     `json:"delta"`
	Balance         int64     `json:"balance"`
	At              time.Time `json:"at"`
}

// adminLedger serves GET /admin/v1/accounts/{id}/ledger?limit=N (default
// 100, at most 1000): the latest movements, newest first.
func (s *Server) adminLedger(c echo.Context) error {
	id := c.Param("id")
	if _, err := s.billing.Account(c.Request().Context(), id); err != nil {
		return err
	}
	n := int64(100)
	// Sent empty (?limit=) is refused, as an empty form field is: only a
	// limit left out takes the default.
	if vs, sent := c.QueryParams()["limit"]; sent {
		v := vs[0]
		if strings.TrimSpace(v) == "" {
			return carphoto.Errorf(carphoto.EInvalidParams, "limit is empty; send an integer from 1 to 1000, or leave it out to take 100")
		}
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil || n < 1 || n > 1000 {
			return carphoto.Errorf(carphoto.EInvalidParams, "limit must be an integer from 1 to 1000, not %q", v)
		}
	}
	entries, err := s.billing.Ledger(c.Request().Context(), id, n)
	if err != nil {
		return err
	}
	out := make([]ledgerEntryBody, len(entries))
	for i, e := range entries {
		out[i] = ledgerEntryBody{ID: e.ID, Kind: e.Kind, RequestID: e.RequestID, ClientRequestID: e.ClientRequestID, Op: e.Op,
			Amount: e.Amount, Delta: e.Delta, Balance: e.Balance, At: e.At}
	}
	return c.JSON(http.StatusOK, map[string]any{"accountId": id, "entries": out})
}

// maxAdminBody caps an admin request body; they are a few fields of JSON.
const maxAdminBody = 64 << 10

// readJSON decodes the request body into v, refusing unknown fields. An
// empty body is allowed when emptyOK (all fields take their zero value).
func readJSON(c echo.Context, v any, emptyOK bool) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, c.Request().Body, maxAdminBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return carphoto.Errorf(carphoto.EPayloadTooLarge, "the body is larger than %d bytes", maxAdminBody)
		}
		return carphoto.Wrap(err, carphoto.EInvalidParams, "could not read the body")
	}
	if len(body) == 0 && emptyOK {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return carphoto.Wrap(err, carphoto.EInvalidParams, "the body must be a JSON object: "+err.Error())
	}
	return nil
}
