package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"carphoto/billing"
	"carphoto/metrics"
	"carphoto/server"
)

// Failed authentications are counted per client address: past
// AUTH_FAILURES_PER_MINUTE an address gets 429 rate_limited with
// Retry-After instead of 401, for API keys and the admin token alike; a
// valid API key is never held up by its address's failures, another
// address has its own budget (IPv6: per /64), and an address past its
// budget cannot try the admin token at all.
func TestAuthFailuresPerAddress(t *testing.T) {
	const admin = "admin-token-for-tests-0123"
	e := newAcctEnv(t, server.Config{AdminToken: admin}, billing.Config{AuthFailuresPerMinute: 3})
	_, key := e.account(t, 5)
	send := func(remote, path, token string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = remote
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		checkAnswer(t, req, rec)
		return rec
	}
	want := func(rec *httptest.ResponseRecorder, status int, code, what string) {
		t.Helper()
		var body struct{ Error, Code string }
		json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != status || body.Code != code || (code != "" && body.Error == "") {
			t.Errorf("%s: %d %s, want %d %s", what, rec.Code, rec.Body, status, code)
		}
		if status == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s: 429 without Retry-After", what)
		}
	}

	const a = "203.0.113.7:4000"
	for i := range 3 {
		want(send(a, "/v1/account", "cp_wrong_key"), 401, "invalid_api_key", fmt.Sprint("wrong key ", i+1))
	}
	want(send(a, "/v1/account", "cp_wrong_key"), 429, "rate_limited", "a 4th wrong key")
	want(send(a, "/v1/account", ""), 429, "rate_limited", "no key after 3 wrong ones")
	want(send(a, "/v1/account", key), 200, "", "a valid key from the same address")
	want(send("198.51.100.9:4000", "/v1/account", "cp_wrong_key"), 401, "invalid_api_key", "a wrong key from another address")

	// IPv6 addresses of one /64 share a budget.
	for _, ip := range []string{"[2001:db8:1:2::1]:4000", "[2001:db8:1:2::2]:4000", "[2001:db8:1:2::3]:4000"} {
		want(send(ip, "/v1/account", "cp_wrong_key"), 401, "invalid_api_key", "a wrong key from "+ip)
	}
	want(send("[2001:db8:1:2::4]:4000", "/v1/account", "cp_wrong_key"), 429, "rate_limited", "a wrong key from the same /64")
	want(send("[2001:db8:1:3::1]:4000", "/v1/account", "cp_wrong_key"), 401, "invalid_api_key", "a wrong key from another /64")

	// The admin token: past the budget, even the right one is not tried.
	const b = "192.0.2.55:4000"
	for range 3 {
		want(send(b, "/admin/v1/accounts/acct_x", "wrong-admin-token-000000"), 401, "invalid_api_key", "a wrong admin token")
	}
	want(send(b, "/admin/v1/accounts/acct_x", "wrong-admin-token-000000"), 429, "rate_limited", "a 4th wrong admin token")
	want(send(b, "/admin/v1/accounts/acct_x", admin), 429, "rate_limited", "the admin token from an address past its budget")
	want(send("192.0.2.56:4000", "/admin/v1/accounts/acct_x", admin), 404, "not_found", "the admin token from another address")
}

// Wrong METRICS_TOKENs count against the address like wrong API keys.
func TestMetricsTokenFailures(t *testing.T) {
	const token = "metrics-token-for-tests-01"
	e := newAcctEnv(t, server.Config{Metrics: metrics.New(), MetricsToken: token}, billing.Config{AuthFailuresPerMinute: 2})
	get := func(bearer string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.RemoteAddr = "203.0.113.70:4000"
		req.Header.Set("Authorization", "Bearer "+bearer)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return rec
	}
	for i, want := range []int{401, 401, 429} {
		if rec := get("wrong-metrics-token-00000"); rec.Code != want {
			t.Errorf("wrong token %d: %d %s, want %d", i+1, rec.Code, rec.Body, want)
		}
	}
	if rec := get(token); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("the right token from an address past its budget: %d, want 429 with Retry-After", rec.Code)
	}
}
