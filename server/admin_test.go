package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"carphoto"
	"carphoto/billing"
	"carphoto/server"
)

const adminToken = "test-admin-token-0123456789"

func TestAdminDisabledWithoutToken(t *testing.T) {
	e := newAcctEnv(t, server.Config{}, billing.Config{})
	for _, token := range []string{"", adminToken} {
		rec := e.do(t, "POST", "/admin/v1/accounts", token, "application/json", []byte(`{}`))
		wantErrorJSON(t, rec, http.StatusNotFound, carphoto.ENotFound)
	}
}

func TestAdminNeedsToken(t *testing.T) {
	e := newAcctEnv(t, server.Config{AdminToken: adminToken}, billing.Config{})
	id, key := e.account(t, 1)
	for name, token := range map[string]string{
		"none":         "",
		"wrong":        adminToken + "x",
		"prefix":       adminToken[:10],
		"a client key": key,
	} {
		t.Run(name, func(t *testing.T) {
			wantErrorJSON(t, e.do(t, "POST", "/admin/v1/accounts", token, "application/json", []byte(`{}`)),
				http.StatusUnauthorized, carphoto.EInvalidAPIKey)
			wantErrorJSON(t, e.do(t, "GET", "/admin/v1/accounts/"+id, token, "", nil),
				http.StatusUnauthorized, carphoto.EInvalidAPIKey)
		})
	}
}

// TestAdminAccountLifecycle drives the dashboard's calls in order and checks
// each one's effect on the public API.
func TestAdminAccountLifecycle(t *testing.T) {
	e := newAcctEnv(t, server.Config{AdminToken: adminToken}, billing.Config{})
	admin := func(method, path, body string) *httptest.ResponseRecorder {
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		return e.do(t, method, path, adminToken, "application/json", b)
	}

	var created struct {
		AccountID string `json:"accountId"`
		APIKey    string `json:"apiKey"`
		Credits   int64  `json:"credits"`
	}
	rec := admin("POST", "/admin/v1/accounts", `{"name":"Dealer A","credits":25}`)
	decodeJSON(t, rec, http.StatusCreated, &created)
	if created.AccountID == "" || created.Credits != 25 || len(created.APIKey) != len(billing.KeyPrefix)+43 {
		t.Fatalf("created %+v, want an id, 25 credits and a key", created)
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("Cache-Control %q on a response with a key, want no-store", rec.Header().Get("Cache-Control"))
	}
	if rec := e.do(t, "GET", "/v1/account", created.APIKey, "", nil); rec.Code != http.StatusOK {
		t.Fatalf("the new key: status %d, want 200", rec.Code)
	}

	var bal struct {
		AccountID string `json:"accountId"`
		Credits   int64  `json:"credits"`
	}
	decodeJSON(t, admin("POST", "/admin/v1/accounts/"+created.AccountID+"/credits", `{"amount":5}`), http.StatusOK, &bal)
	if bal.Credits != 30 {
		t.Fatalf("after adding 5: %+v, want 30", bal)
	}
	wantErrorJSON(t, admin("POST", "/admin/v1/accounts/"+created.AccountID+"/credits", `{"amount":-31}`), http.StatusBadRequest, carphoto.EInvalidParams)
	wantErrorJSON(t, admin("POST", "/admin/v1/accounts/"+created.AccountID+"/credits", `{}`), http.StatusBadRequest, carphoto.EInvalidParams)
	wantErrorJSON(t, admin("POST", "/admin/v1/accounts/"+created.AccountID+"/credits", `{"amount":"5"}`), http.StatusBadRequest, carphoto.EInvalidParams)

	var shown struct {
		AccountID string `json:"accountId"`
		Name      string `json:"name"`
		Credits   int64  `json:"credits"`
		HasKey    bool   `json:"hasKey"`
	}
	decodeJSON(t, admin("GET", "/admin/v1/accounts/"+created.AccountID, ""), http.StatusOK, &shown)
	if shown.Name != "Dealer A" || shown.Credits != 30 || !shown.HasKey {
		t.Fatalf("shown %+v, want Dealer A with 30 credits and a key", shown)
	}

	var ledger struct {
		Entries []struct {
			Kind    string `json:"kind"`
			Amount  int64  `json:"amount"`
			Balance int64  `json:"balance"`
		} `json:"entries"`
	}
	decodeJSON(t, admin("GET", "/admin/v1/accounts/"+created.AccountID+"/ledger", ""), http.StatusOK, &ledger)
	if len(ledger.Entries) != 2 || ledger.Entries[0].Amount != 5 || ledger.Entries[0].Balance != 30 {
		t.Fatalf("ledger %+v, want the +5 then the opening 25, newest first", ledger.Entries)
	}

	var rotated struct {
		AccountID string `json:"accountId"`
		APIKey    string `json:"apiKey"`
	}
	decodeJSON(t, admin("POST", "/admin/v1/accounts/"+created.AccountID+"/keys/rotate", ""), http.StatusOK, &rotated)
	if rotated.APIKey == "" || rotated.APIKey == created.APIKey {
		t.Fatalf("rotate gave %q, want a new key", rotated.APIKey)
	}
	wantErrorJSON(t, e.do(t, "GET", "/v1/account", created.APIKey, "", nil), http.StatusUnauthorized, carphoto.EInvalidAPIKey)
	if rec := e.do(t, "GET", "/v1/account", rotated.APIKey, "", nil); rec.Code != http.StatusOK {
		t.Fatalf("the rotated-in key: status %d, want 200", rec.Code)
	}

	var revoked struct {
		AccountID string `json:"accountId"`
		Revoked   bool   `json:"revoked"`
	}
	decodeJSON(t, admin("POST", "/admin/v1/accounts/"+created.AccountID+"/keys/revoke", ""), http.StatusOK, &revoked)
	if !revoked.Revoked || revoked.AccountID != created.AccountID {
		t.Fatalf("revoke answered %+v", revoked)
	}
	wantErrorJSON(t, e.do(t, "GET", "/v1/account", rotated.APIKey, "", nil), http.StatusUnauthorized, carphoto.EInvalidAPIKey)

	for _, p := range []string{"", "/keys/rotate", "/keys/revoke", "/credits"} {
		method, body := "POST", `{"amount":1}`
		if p == "" {
			method, body = "GET", ""
		}
		wantErrorJSON(t, admin(method, "/admin/v1/accounts/acct_nosuchaccount"+p, body), http.StatusNotFound, carphoto.ENotFound)
	}
	wantErrorJSON(t, admin("POST", "/admin/v1/accounts", `{"credits":-1}`), http.StatusBadRequest, carphoto.EInvalidParams)
}

// A credit amount past what a balance can hold is the caller's mistake:
// 400 invalid_params, the balance unchanged (it was 503 once).
func TestAdminCreditOverflow(t *testing.T) {
	e := newAcctEnv(t, server.Config{AdminToken: adminToken}, billing.Config{})
	id, _ := e.account(t, 25)
	for _, amount := range []string{"9223372036854775807", "-9223372036854775808", "1000000000001", "99999999999999999999"} {
		t.Run(amount, func(t *testing.T) {
			rec := e.do(t, "POST", "/admin/v1/accounts/"+id+"/credits", adminToken, "application/json", []byte(`{"amount":`+amount+`}`))
			wantErrorJSON(t, rec, http.StatusBadRequest, carphoto.EInvalidParams)
		})
	}
	rec := e.do(t, "POST", "/admin/v1/accounts", adminToken, "application/json", []byte(`{"credits":9223372036854775807}`))
	wantErrorJSON(t, rec, http.StatusBadRequest, carphoto.EInvalidParams)
	var acct struct{ Credits int64 }
	decodeJSON(t, e.do(t, "GET", "/admin/v1/accounts/"+id, adminToken, "", nil), http.StatusOK, &acct)
	if acct.Credits != 25 {
		t.Fatalf("balance %d after refused changes, want 25", acct.Credits)
	}
}

// The admin API has a rate limit of its own: past it, 429 with Retry-After;
// client keys are not affected.
func TestAdminRateLimited(t *testing.T) {
	e := newAcctEnv(t, server.Config{AdminToken: adminToken}, billing.Config{AdminRateLimitPerMinute: 3})
	id, key := e.account(t, 1)
	for i := 1; i <= 3; i++ {
		if rec := e.do(t, "GET", "/admin/v1/accounts/"+id, adminToken, "", nil); rec.Code != http.StatusOK {
			t.Fatalf("admin call %d: status %d, want 200", i, rec.Code)
		}
	}
	rec := e.do(t, "GET", "/admin/v1/accounts/"+id, adminToken, "", nil)
	wantErrorJSON(t, rec, http.StatusTooManyRequests, carphoto.ERateLimited)
	if rec.Header().Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	wantErrorJSON(t, e.do(t, "GET", "/admin/v1/accounts/"+id, "wrong-token-0123456789", "", nil), http.StatusUnauthorized, carphoto.EInvalidAPIKey)
	if rec := e.do(t, "GET", "/v1/account", key, "", nil); rec.Code != http.StatusOK {
		t.Fatalf("client key: status %d, want 200", rec.Code)
	}
}
