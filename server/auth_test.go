package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"carphoto"
	"carphoto/billing"
	"carphoto/internal/testenv/apitest"
	"carphoto/internal/testenv/redistest"
	"carphoto/jobs"
	"carphoto/objstore"
	"carphoto/server"
)

// acctEnv is the web API over a flushed Redis (db 2), for the billing
// routes: a handler, the billing service behind it, and what it logged.
type acctEnv struct {
	h       http.Handler
	billing *billing.Service
	rdb     *redistest.Server
	logs    *logBuffer
}

func newAcctEnv(tb testing.TB, cfg server.Config, bcfg billing.Config) *acctEnv {
	tb.Helper()
	r := redistest.New(tb, 2)
	if bcfg.Assets == nil {
		st, err := objstore.NewLocal(filepath.Join(tb.TempDir(), objstore.Assets))
		if err != nil {
			tb.Fatal(err)
		}
		bcfg.Assets = st
	}
	b := billing.New(r.Client, bcfg)
	j := jobs.NewClient(r.Client, 0)
	tb.Cleanup(func() { j.Close() })
	logs := &logBuffer{}
	log := zerolog.New(logs).Level(zerolog.DebugLevel)
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 5e9
	}
	if cfg.MaxUploadBytes == 0 {
		cfg.MaxUploadBytes = 1 << 20
	}
	if cfg.MaxPixels == 0 {
		cfg.MaxPixels = 1e7
	}
	return &acctEnv{h: server.New(cfg, log, r.Client, b, j).Handler(), billing: b, rdb: r, logs: logs}
}

// account creates an account and returns its id and API key.
func (e *acctEnv) account(tb testing.TB, credits int64) (string, string) {
	tb.Helper()
	a, key, err := e.billing.CreateAccount(context.Background(), "Test Motors", credits)
	if err != nil {
		tb.Fatal(err)
	}
	return a.ID, key
}

// do sends a request with an optional bearer token and body.
func (e *acctEnv) do(tb testing.TB, method, path, token, contentType string, body []byte) *httptest.ResponseRecorder {
	tb.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	checkAnswer(tb, req, rec)
	return rec
}

var loadChecker = sync.OnceValues(apitest.Load)

// checkAnswer fails the test when the answer departs from openapi.json.
func checkAnswer(tb testing.TB, req *http.Request, rec *httptest.ResponseRecorder) {
	tb.Helper()
	c, err := loadChecker()
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.Check(req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
		tb.Errorf("answer does not match openapi.json: %v", err)
	}
}

// wantErrorJSON fails unless rec is a JSON error with the given status and code.
func wantErrorJSON(tb testing.TB, rec *httptest.ResponseRecorder, status int, code string) {
	tb.Helper()
	var body struct{ Error, Code string }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		tb.Fatalf("status %d, body %q: not a JSON error: %v", rec.Code, rec.Body, err)
	}
	if rec.Code != status || body.Code != code || body.Error == "" {
		tb.Fatalf("got %d %q (%q), want %d %q", rec.Code, body.Code, body.Error, status, code)
	}
}

// decodeJSON fails unless rec has the status, then decodes its JSON body into v.
func decodeJSON(tb testing.TB, rec *httptest.ResponseRecorder, status int, v any) {
	tb.Helper()
	if rec.Code != status {
		tb.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		tb.Fatalf("body %q: %v", rec.Body, err)
	}
}

// logBuffer collects the server's log lines; requests may log from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestAuthenticationRefusals(t *testing.T) {
	e := newAcctEnv(t, server.Config{}, billing.Config{})
	_, key := e.account(t, 5)
	for _, tc := range []struct {
		name, method, path, header string
	}{
		{"no header", "GET", "/v1/account", ""},
		{"not bearer", "GET", "/v1/account", "Basic " + key},
		{"malformed key", "GET", "/v1/account", "Bearer hello"},
		{"unknown key", "GET", "/v1/account", "Bearer " + billing.KeyPrefix + strings.Repeat("x", 43)},
		{"unknown tool, no key", "POST", "/v1/cut-out", ""},
		{"operation, no key", "POST", "/v1/blur-plates", ""},
		{"assets, no key", "GET", "/v1/assets", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, req)
			wantErrorJSON(t, rec, http.StatusUnauthorized, carphoto.EInvalidAPIKey)
			if strings.Contains(rec.Body.String(), key[len(billing.KeyPrefix):]) {
				t.Fatal("the error repeats the API key")
			}
		})
	}
}

func TestRotatedAndRevokedKeysRefusedAtOnce(t *testing.T) {
	ctx := context.Background()
	e := newAcctEnv(t, server.Config{}, billing.Config{})
	id, old := e.account(t, 5)
	if rec := e.do(t, "GET", "/v1/account", old, "", nil); rec.Code != http.StatusOK {
		t.Fatalf("valid key: status %d, want 200", rec.Code)
	}
	fresh, err := e.billing.RotateKey(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	wantErrorJSON(t, e.do(t, "GET", "/v1/account", old, "", nil), http.StatusUnauthorized, carphoto.EInvalidAPIKey)
	if rec := e.do(t, "GET", "/v1/account", fresh, "", nil); rec.Code != http.StatusOK {
		t.Fatalf("rotated-in key: status %d, want 200", rec.Code)
	}
	if err := e.billing.RevokeKey(ctx, id); err != nil {
		t.Fatal(err)
	}
	wantErrorJSON(t, e.do(t, "GET", "/v1/account", fresh, "", nil), http.StatusUnauthorized, carphoto.EInvalidAPIKey)
}

// TestRateLimit is the acceptance case: 64 quick requests on one key.
func TestRateLimit(t *testing.T) {
	// Six a minute: a token comes back every 10 s, so a loaded machine
	// that runs the loop slowly still sees the budget run out.
	e := newAcctEnv(t, server.Config{}, billing.Config{RateLimitPerMinute: 6})
	_, key := e.account(t, 0)
	_, other := e.account(t, 0)
	for i := 1; i <= 9; i++ {
		rec := e.do(t, "GET", "/v1/account", key, "", nil)
		h := rec.Header()
		if h.Get("X-RateLimit-Limit") != "6" || h.Get("X-RateLimit-Remaining") == "" || h.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("request %d: rate-limit headers %v, want Limit 6, Remaining and Reset", i, h)
		}
		if i <= 6 {
			if rec.Code != http.StatusOK || h.Get("X-RateLimit-Remaining") != strconv.Itoa(6-i) {
				t.Fatalf("request %d: status %d, remaining %s; want 200 with %d remaining", i, rec.Code, h.Get("X-RateLimit-Remaining"), 6-i)
			}
			continue
		}
		wantErrorJSON(t, rec, http.StatusTooManyRequests, carphoto.ERateLimited)
		if n, err := strconv.Atoi(h.Get("Retry-After")); err != nil || n < 1 {
			t.Fatalf("request %d: Retry-After %q, want whole seconds ≥ 1", i, h.Get("Retry-After"))
		}
	}
	// Refused before anything else is looked at: 429 wins over 400.
	wantErrorJSON(t, e.do(t, "POST", "/v1/no-such-tool", key, "", nil), http.StatusTooManyRequests, carphoto.ERateLimited)
	wantErrorJSON(t, e.do(t, "POST", "/v1/blur-plates", key, "", nil), http.StatusTooManyRequests, carphoto.ERateLimited)

	rec := e.do(t, "GET", "/v1/account", other, "", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("X-RateLimit-Remaining") != "5" {
		t.Fatalf("another key: status %d, remaining %s; want 200 with 5", rec.Code, rec.Header().Get("X-RateLimit-Remaining"))
	}
}

// TestRateLimitHeadersOnErrors: an authenticated request that fails later
// still carries the rate-limit headers, and authentication comes first.
func TestRateLimitHeadersOnErrors(t *testing.T) {
	e := newAcctEnv(t, server.Config{}, billing.Config{})
	_, key := e.account(t, 0)
	rec := e.do(t, "POST", "/v1/no-such-tool", key, "", nil)
	wantErrorJSON(t, rec, http.StatusBadRequest, carphoto.EUnknownTool)
	if rec.Header().Get("X-RateLimit-Limit") != "60" || rec.Header().Get("X-RateLimit-Remaining") != "59" {
		t.Fatalf("headers %v, want X-RateLimit-Limit 60 and Remaining 59", rec.Header())
	}
	// Unauthenticated requests are not counted against anyone.
	e.do(t, "GET", "/v1/account", "", "", nil)
	if got := e.do(t, "GET", "/v1/account", key, "", nil).Header().Get("X-RateLimit-Remaining"); got != "58" {
		t.Fatalf("remaining %s after two counted requests, want 58", got)
	}
}

// TestKeysNotLogged sends good and bad keys and searches the log for them.
func TestKeysNotLogged(t *testing.T) {
	e := newAcctEnv(t, server.Config{AdminToken: "admin-token-0123456789"}, billing.Config{})
	_, key := e.account(t, 1)
	bad := billing.KeyPrefix + strings.Repeat("Z", 43)
	e.do(t, "GET", "/v1/account", key, "", nil)
	e.do(t, "POST", "/v1/blur-plates", key, "", nil)
	e.do(t, "GET", "/v1/account", bad, "", nil)
	created := e.do(t, "POST", "/admin/v1/accounts", "admin-token-0123456789", "application/json", []byte(`{"credits":1}`))
	var out struct {
		APIKey string `json:"apiKey"`
	}
	decodeJSON(t, created, http.StatusCreated, &out)
	logs := e.logs.String()
	if !strings.Contains(logs, "key_id") {
		t.Fatalf("the log names no key_id; the test would prove nothing:\n%s", logs)
	}
	for _, k := range []string{key, bad, out.APIKey, "admin-token-0123456789"} {
		if strings.Contains(logs, k[8:]) {
			t.Fatalf("a secret (%s…) appears in the log", k[:10])
		}
	}
}
