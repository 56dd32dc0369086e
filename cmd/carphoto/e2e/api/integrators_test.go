package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"carphoto/internal/service"
	"carphoto/internal/testenv/e2etest"
)

// What integrators' own tools expect of the service (issue 83): HTTP as
// clients read it (Allow, HEAD, WWW-Authenticate, JSON for every error),
// empty values refused, browsers let in where the operator says, a
// client's own request id echoed.

// send makes one request with the given headers and returns the answer.
func send(t *testing.T, method, url string, header http.Header, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body of %s %s: %v", method, url, err)
	}
	return res.StatusCode, res.Header, b
}

// multipartHeader is the header of a multipart call with key, and more.
func multipartHeader(key, contentType string, more ...string) http.Header {
	h := http.Header{"Content-Type": {contentType}, "Authorization": {"Bearer " + key}}
	for i := 0; i+1 < len(more); i += 2 {
		h[http.CanonicalHeaderKey(more[i])] = []string{more[i+1]}
	}
	return h
}

// errorMessage is the message of a JSON {error, code} body.
func errorMessage(body []byte) string {
	var e struct{ Error string }
	json.Unmarshal(body, &e)
	return e.Error
}

// An empty field or Idempotency-Key is refused, naming it, and costs
// nothing: it used to be taken as not sent, answered 200 and charged (and
// an empty key lost the retry safety its client asked for).
func TestEmptyValuesRefused(t *testing.T) {
	const admin = "empty-admin-token-0123456789"
	s := e2etest.StartService(t, map[string]string{"ADMIN_TOKEN": admin})
	id, key := s.Account(t, 5)
	photo := e2etest.CarPhoto(t)
	cases := []struct {
		name, op string
		parts    []e2etest.Part
		header   []string
		names    string // what the message must name
	}{
		{"style", "blur-plates", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("style", "")}, nil, `"style"`},
		{"requirePlate blank", "blur-plates", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("requirePlate", "  ")}, nil, `"requirePlate"`},
		{"format", "plate-logo", []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", photo), e2etest.Field("format", "")}, nil, `"format"`},
		{"requireWholeCar", "car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("requireWholeCar", "")}, nil, `"requireWholeCar"`},
		{"imageUrl", "car-cutout", []e2etest.Part{e2etest.Field("imageUrl", "")}, nil, `"imageUrl"`},
		{"Idempotency-Key", "blur-plates", []e2etest.Part{e2etest.File("image", photo)}, []string{"Idempotency-Key", ""}, "Idempotency-Key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, ct := e2etest.MultipartBody(t, tc.parts...)
			status, h, b := send(t, http.MethodPost, s.URL+"/v1/"+tc.op, multipartHeader(key, ct, tc.header...), body)
			e2etest.WantError(t, status, h, b, http.StatusBadRequest, "invalid_params")
			if msg := errorMessage(b); !strings.Contains(msg, tc.names) || !strings.Contains(msg, "empty") {
				t.Errorf("message %q does not say %s is empty", msg, tc.names)
			}
		})
	}
	// The asset and video forms are read the same way.
	body, ct := e2etest.MultipartBody(t, e2etest.File("file", photo), e2etest.Field("kind", ""))
	status, h, b := send(t, http.MethodPost, s.URL+"/v1/assets", multipartHeader(key, ct), body)
	e2etest.WantError(t, status, h, b, http.StatusBadRequest, "invalid_params")
	// So is a query parameter: the ledger's limit.
	adminAuth := http.Header{"Authorization": {"Bearer " + admin}}
	status, h, b = send(t, http.MethodGet, s.URL+"/admin/v1/accounts/"+id+"/ledger?limit=", adminAuth, nil)
	e2etest.WantError(t, status, h, b, http.StatusBadRequest, "invalid_params")
	if msg := errorMessage(b); !strings.Contains(msg, "limit") || !strings.Contains(msg, "empty") {
		t.Errorf("ledger ?limit=: message %q does not say limit is empty", msg)
	}
	if status, _, b := send(t, http.MethodGet, s.URL+"/admin/v1/accounts/"+id+"/ledger", adminAuth, nil); status != http.StatusOK {
		t.Errorf("ledger with no limit: %d %.200s", status, b)
	}
	if got := s.Credits(t, id); got != 5 {
		t.Errorf("balance %d after empty values, want 5: none may be charged", got)
	}
	// Left out, the same fields take their defaults: the call is answered.
	body, ct = e2etest.MultipartBody(t, e2etest.File("image", photo))
	if status, _, b := send(t, http.MethodPost, s.URL+"/v1/blur-plates", multipartHeader(key, ct), body); status != http.StatusOK {
		t.Errorf("blur-plates with no style: %d %.200s", status, b)
	}
}

// A method a path does not take is 405 with Allow naming those it does;
// HEAD is answered wherever GET is; a 401 challenges for a Bearer key;
// every one of them is JSON {error, code}.
func TestHTTPAsClientsExpect(t *testing.T) {
	const admin = "http-admin-token-0123456789"
	s := e2etest.StartService(t, map[string]string{"ADMIN_TOKEN": admin})
	id, key := s.Account(t, 5)
	auth := http.Header{"Authorization": {"Bearer " + key}}
	adminAuth := http.Header{"Authorization": {"Bearer " + admin}}

	for _, tc := range []struct {
		method, path string
		header       http.Header
		allow        []string // Allow must list these
	}{
		{http.MethodGet, "/v1/blur-plates", auth, []string{"POST"}},
		{http.MethodDelete, "/v1/no-such-tool", auth, []string{"POST"}},
		{http.MethodDelete, "/v1/account", auth, []string{"GET", "HEAD"}},
		{http.MethodPut, "/v1/assets", auth, []string{"GET", "HEAD", "POST"}},
		{http.MethodPost, "/v1/jobs/vid_x", auth, []string{"GET", "HEAD"}},
		{http.MethodPost, "/healthz", nil, []string{"GET", "HEAD"}},
		{http.MethodDelete, "/v1/openapi.json", nil, []string{"GET", "HEAD"}},
		{http.MethodPost, "/docs", nil, []string{"GET", "HEAD"}},
		// The admin API and the dashboard, with their token or without:
		// the method is wrong whoever asks.
		{http.MethodDelete, "/admin/v1/accounts/" + id, adminAuth, []string{"GET", "HEAD"}},
		{http.MethodDelete, "/admin/v1/accounts/" + id, nil, []string{"GET", "HEAD"}},
		{http.MethodGet, "/admin/v1/accounts", adminAuth, []string{"POST"}},
		{http.MethodGet, "/admin/v1/accounts/" + id + "/credits", adminAuth, []string{"POST"}},
		{http.MethodPut, "/admin/queues", nil, []string{"GET", "HEAD"}},
		{http.MethodPost, "/admin/queues/api/queues", adminAuth, []string{"GET", "HEAD"}},
	} {
		status, h, b := send(t, tc.method, s.URL+tc.path, tc.header, nil)
		e2etest.WantError(t, status, h, b, http.StatusMethodNotAllowed, "method_not_allowed")
		if msg := errorMessage(b); !strings.Contains(msg, tc.allow[0]) {
			t.Errorf("%s %s: message %q does not say what the path takes", tc.method, tc.path, msg)
		}
		allow := strings.Split(strings.ReplaceAll(h.Get("Allow"), " ", ""), ",")
		for _, m := range tc.allow {
			if !slices.Contains(allow, m) {
				t.Errorf("%s %s: Allow %q does not list %s", tc.method, tc.path, h.Get("Allow"), m)
			}
		}
		if slices.Contains(allow, tc.method) {
			t.Errorf("%s %s: Allow %q lists the method refused", tc.method, tc.path, h.Get("Allow"))
		}
	}

	// A path no route serves is not told apart by its method: an admin
	// one is 401 without the token, 404 with it.
	for _, path := range []string{"/admin/v1/nope", "/admin/v1"} {
		status, h, b := send(t, http.MethodDelete, s.URL+path, nil, nil)
		e2etest.WantError(t, status, h, b, http.StatusUnauthorized, "invalid_api_key")
		if got := h.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer ") {
			t.Errorf("DELETE %s: 401 WWW-Authenticate %q, want a Bearer challenge", path, got)
		}
	}
	status, h, b := send(t, http.MethodDelete, s.URL+"/admin/v1/nope", adminAuth, nil)
	e2etest.WantError(t, status, h, b, http.StatusNotFound, "not_found")

	// HEAD: GET's status and headers, no body.
	for _, tc := range []struct {
		path   string
		header http.Header
	}{{"/healthz", nil}, {"/readyz", nil}, {"/v1/openapi.json", nil}, {"/docs", nil}, {"/v1/account", auth}, {"/v1/assets", auth}} {
		gs, gh, gb := send(t, http.MethodGet, s.URL+tc.path, tc.header, nil)
		hs, hh, hb := send(t, http.MethodHead, s.URL+tc.path, tc.header, nil)
		if hs != gs || hs != http.StatusOK || len(hb) != 0 {
			t.Errorf("HEAD %s: %d with %d bytes; GET: %d", tc.path, hs, len(hb), gs)
		}
		if hh.Get("Content-Type") != gh.Get("Content-Type") {
			t.Errorf("HEAD %s: Content-Type %q, GET's %q", tc.path, hh.Get("Content-Type"), gh.Get("Content-Type"))
		}
		if n := hh.Get("Content-Length"); n != "" && n != strconv.Itoa(len(gb)) {
			t.Errorf("HEAD %s: Content-Length %s, GET's body is %d bytes", tc.path, n, len(gb))
		}
	}
	if _, h, _ := send(t, http.MethodHead, s.URL+"/v1/account", auth, nil); h.Get("X-RateLimit-Remaining") == "" {
		t.Error("HEAD /v1/account has no X-RateLimit-Remaining: it is a /v1 call like GET")
	}

	// 401: a Bearer challenge, on a missing key and a wrong one.
	for _, h := range []http.Header{nil, {"Authorization": {"Bearer cp_live_wrong"}}} {
		status, rh, b := send(t, http.MethodGet, s.URL+"/v1/account", h, nil)
		e2etest.WantError(t, status, rh, b, http.StatusUnauthorized, "invalid_api_key")
		if got := rh.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer ") {
			t.Errorf("401 WWW-Authenticate %q, want a Bearer challenge", got)
		}
	}

	// A client's own request id comes back beside ours.
	_, h, _ = send(t, http.MethodGet, s.URL+"/v1/account", http.Header{"Authorization": auth["Authorization"], "X-Request-Id": {"dealer-run-42"}}, nil)
	if h.Get("X-Client-Request-Id") != "dealer-run-42" || h.Get("X-Request-Id") == "dealer-run-42" || h.Get("X-Request-Id") == "" {
		t.Errorf("X-Client-Request-Id %q, X-Request-Id %q: want the client's id echoed and our own beside it",
			h.Get("X-Client-Request-Id"), h.Get("X-Request-Id"))
	}
}

// A non-image file too large for its kind of asset is 413, before the
// 400 its content would get: the documented order is the upload's limits
// first.
func TestAssetTooLargeBeforeNotAnImage(t *testing.T) {
	s := e2etest.StartService(t, map[string]string{"MAX_ASSET_BYTES": "2048"})
	_, key := s.Account(t, 5)
	junk := bytes.Repeat([]byte("not an image "), 400) // 5200 bytes
	body, ct := e2etest.MultipartBody(t, e2etest.File("file", junk))
	status, h, b := send(t, http.MethodPost, s.URL+"/v1/assets", multipartHeader(key, ct), body)
	e2etest.WantError(t, status, h, b, http.StatusRequestEntityTooLarge, "payload_too_large")
	// Within the limit, the same junk is what is wrong.
	body, ct = e2etest.MultipartBody(t, e2etest.File("file", junk[:1500]))
	status, h, b = send(t, http.MethodPost, s.URL+"/v1/assets", multipartHeader(key, ct), body)
	e2etest.WantError(t, status, h, b, http.StatusBadRequest, "invalid_params")
	// A kind that is none is named, not the file's content.
	body, ct = e2etest.MultipartBody(t, e2etest.Field("kind", "poster"), e2etest.File("file", junk[:1500]))
	status, h, b = send(t, http.MethodPost, s.URL+"/v1/assets", multipartHeader(key, ct), body)
	e2etest.WantError(t, status, h, b, http.StatusBadRequest, "invalid_params")
	if msg := errorMessage(b); !strings.Contains(msg, "kind") || !strings.Contains(msg, `"poster"`) {
		t.Errorf("kind=poster: message %q does not name the kind", msg)
	}
}

// CORS: the public documents from any origin; the API from CORS_ORIGINS
// only; preflights answered before authentication, counted against no
// key's rate and no address's failed authentications; the headers a page
// needs exposed; Vary: Origin.
func TestCORS(t *testing.T) {
	const dealer, stranger = "http://dealer.example", "http://stranger.example"
	s := e2etest.StartService(t, map[string]string{"CORS_ORIGINS": dealer + ", https://other.example:8443",
		"RATE_LIMIT_PER_MINUTE": "3", "AUTH_FAILURES_PER_MINUTE": "2"})
	_, key := s.Account(t, 5)
	vary := func(h http.Header) bool { return strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") }

	// The public document, from anywhere.
	status, h, _ := send(t, http.MethodGet, s.URL+"/v1/openapi.json", http.Header{"Origin": {stranger}}, nil)
	if status != 200 || h.Get("Access-Control-Allow-Origin") != "*" || !vary(h) {
		t.Errorf("GET /v1/openapi.json from %s: %d, Allow-Origin %q, Vary %q: want 200, *, Origin", stranger, status, h.Get("Access-Control-Allow-Origin"), h.Values("Vary"))
	}

	// Preflights, more than the key's rate and the address's failures allow.
	preflight := http.Header{"Origin": {dealer}, "Access-Control-Request-Method": {"POST"},
		"Access-Control-Request-Headers": {"authorization, idempotency-key, x-request-id"}}
	for range 5 {
		status, h, b := send(t, http.MethodOptions, s.URL+"/v1/blur-plates", preflight, nil)
		if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != dealer {
			t.Fatalf("preflight from %s: %d, Allow-Origin %q (%s): want 204 and the origin", dealer, status, h.Get("Access-Control-Allow-Origin"), b)
		}
		for _, want := range []string{"Authorization", "Idempotency-Key", "X-Request-Id", "Content-Type"} {
			if !strings.Contains(h.Get("Access-Control-Allow-Headers"), want) {
				t.Errorf("preflight Allow-Headers %q lacks %s", h.Get("Access-Control-Allow-Headers"), want)
			}
		}
		if !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || h.Get("X-RateLimit-Remaining") != "" {
			t.Errorf("preflight Allow-Methods %q, X-RateLimit-Remaining %q: want POST, and no rate counted", h.Get("Access-Control-Allow-Methods"), h.Get("X-RateLimit-Remaining"))
		}
	}
	status, h, b := send(t, http.MethodOptions, s.URL+"/v1/blur-plates", http.Header{"Origin": {stranger}, "Access-Control-Request-Method": {"POST"}}, nil)
	if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from %s: %d, Allow-Origin %q (%s): want 204 and none", stranger, status, h.Get("Access-Control-Allow-Origin"), b)
	}
	// No preflight counted as a failed authentication: a call with no key
	// is still 401, not 429.
	status, h, b = send(t, http.MethodGet, s.URL+"/v1/account", http.Header{"Origin": {dealer}}, nil)
	e2etest.WantError(t, status, h, b, http.StatusUnauthorized, "invalid_api_key")
	if h.Get("Access-Control-Allow-Origin") != dealer {
		t.Errorf("401 to %s: Allow-Origin %q: a page must be able to read the error", dealer, h.Get("Access-Control-Allow-Origin"))
	}

	// The call itself: the key's first of 3 this minute, its headers exposed.
	body, ct := e2etest.MultipartBody(t, e2etest.File("image", e2etest.CarPhoto(t)))
	hdr := multipartHeader(key, ct, "Origin", dealer)
	status, h, b = send(t, http.MethodPost, s.URL+"/v1/blur-plates", hdr, body)
	if status != 200 || h.Get("Access-Control-Allow-Origin") != dealer || !vary(h) {
		t.Fatalf("blur-plates from %s: %d, Allow-Origin %q, Vary %q (%.200s)", dealer, status, h.Get("Access-Control-Allow-Origin"), h.Values("Vary"), b)
	}
	if h.Get("X-RateLimit-Remaining") != "2" {
		t.Errorf("X-RateLimit-Remaining %q after 6 preflights and one call, want 2 of 3: preflights must not count", h.Get("X-RateLimit-Remaining"))
	}
	exposed := strings.Split(strings.ReplaceAll(h.Get("Access-Control-Expose-Headers"), " ", ""), ",")
	for _, want := range []string{"X-Credits-Charged", "X-Credits-Remaining", "X-Request-Id", "X-Client-Request-Id", "X-RateLimit-Limit",
		"X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "X-Plates-Found", "X-Plates-Designed", "X-Car-Truncated",
		"X-Car-Scale", "Idempotent-Replayed", "Location"} {
		if !slices.Contains(exposed, want) {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", h.Get("Access-Control-Expose-Headers"), want)
		}
	}
	// Another origin's call is served (no browser would let its page read
	// it) without the headers that would let it.
	hdr = multipartHeader(key, ct, "Origin", stranger)
	status, h, _ = send(t, http.MethodPost, s.URL+"/v1/blur-plates", hdr, body)
	if status != 200 || h.Get("Access-Control-Allow-Origin") != "" || h.Get("Access-Control-Expose-Headers") != "" {
		t.Errorf("blur-plates from %s: %d, Allow-Origin %q, Expose %q: want no CORS headers", stranger, status, h.Get("Access-Control-Allow-Origin"), h.Get("Access-Control-Expose-Headers"))
	}
}

// CORS_ORIGINS is empty by default, and holds origins only.
func TestCORSOriginsConfig(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "CORS_ORIGINS" {
				return v
			}
			return ""
		}
	}
	c, err := service.LoadConfig(env(""))
	if err != nil || len(c.CORSOrigins) != 0 {
		t.Errorf("default CORS_ORIGINS: %v, %v; want none", c.CORSOrigins, err)
	}
	c, err = service.LoadConfig(env("https://a.example, http://localhost:3000"))
	if err != nil || !slices.Equal(c.CORSOrigins, []string{"https://a.example", "http://localhost:3000"}) {
		t.Errorf("CORS_ORIGINS two origins: %v, %v", c.CORSOrigins, err)
	}
	for _, bad := range []string{"*", "https://a.example/", "a.example", "ftp://a.example", "https://A.example", "https://a.example/x?y"} {
		if _, err := service.LoadConfig(env(bad)); err == nil || !strings.Contains(err.Error(), "CORS_ORIGINS") {
			t.Errorf("CORS_ORIGINS=%q: %v, want refused naming CORS_ORIGINS", bad, err)
		}
	}
}

// Where the format field is absent, an Accept naming an image type we
// serve picks the answer's type; a wildcard, JSON or none keeps the
// default; the field wins over Accept; Vary: Accept; and the format chosen
// is part of what an Idempotency-Key stands for.
func TestAcceptPicksFormat(t *testing.T) {
	s := e2etest.StartService(t, nil)
	_, key := s.Account(t, 20)
	photo := e2etest.CarPhoto(t)
	for _, tc := range []struct {
		accept, format, want string
	}{
		{"", "", "image/jpeg"},
		{"*/*", "", "image/jpeg"},
		{"image/*", "", "image/jpeg"},
		{"application/json", "", "image/jpeg"},
		{"image/png", "", "image/png"},
		{"image/webp;q=0.5, image/png;q=0.9, */*;q=0.1", "", "image/png"},
		{"image/avif, image/webp, */*;q=0.8", "", "image/webp"},
		{"image/png", "jpeg", "image/jpeg"},
	} {
		parts := []e2etest.Part{e2etest.File("image", photo)}
		if tc.format != "" {
			parts = append(parts, e2etest.Field("format", tc.format))
		}
		body, ct := e2etest.MultipartBody(t, parts...)
		hdr := multipartHeader(key, ct)
		if tc.accept != "" {
			hdr.Set("Accept", tc.accept)
		}
		status, h, b := send(t, http.MethodPost, s.URL+"/v1/blur-plates", hdr, body)
		if status != 200 || h.Get("Content-Type") != tc.want || http.DetectContentType(b) != tc.want {
			t.Errorf("Accept %q, format %q: %d %s (bytes %s), want %s", tc.accept, tc.format, status, h.Get("Content-Type"), http.DetectContentType(b), tc.want)
		}
		if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Accept") {
			t.Errorf("Accept %q: Vary %q lacks Accept", tc.accept, h.Values("Vary"))
		}
	}
	// The same photo under one key, asked for as PNG then as WebP, is two
	// requests, not a replay.
	body, ct := e2etest.MultipartBody(t, e2etest.File("image", photo))
	hdr := multipartHeader(key, ct, "Idempotency-Key", "accept-1", "Accept", "image/png")
	if status, h, b := send(t, http.MethodPost, s.URL+"/v1/blur-plates", hdr, body); status != 200 || h.Get("Content-Type") != "image/png" {
		t.Fatalf("first call: %d %s %.200s", status, h.Get("Content-Type"), b)
	}
	hdr.Set("Accept", "image/webp")
	status, h, b := send(t, http.MethodPost, s.URL+"/v1/blur-plates", hdr, body)
	e2etest.WantError(t, status, h, b, http.StatusUnprocessableEntity, "idempotency_key_reused")
}

// A client's own X-Request-Id is kept in the ledger beside ours, on the
// call's hold; ours stays the id the records are kept under.
func TestClientRequestIDInLedger(t *testing.T) {
	const admin = "ledger-admin-token-0123456789"
	s := e2etest.StartService(t, map[string]string{"ADMIN_TOKEN": admin})
	id, key := s.Account(t, 5)
	body, ct := e2etest.MultipartBody(t, e2etest.File("image", e2etest.CarPhoto(t)))
	status, h, b := send(t, http.MethodPost, s.URL+"/v1/blur-plates", multipartHeader(key, ct, "X-Request-Id", "dealer-job-7"), body)
	if status != 200 || h.Get("X-Client-Request-Id") != "dealer-job-7" {
		t.Fatalf("blur-plates: %d, X-Client-Request-Id %q (%.200s)", status, h.Get("X-Client-Request-Id"), b)
	}
	ours := h.Get("X-Request-Id")
	status, _, b = send(t, http.MethodGet, s.URL+"/admin/v1/accounts/"+id+"/ledger", http.Header{"Authorization": {"Bearer " + admin}}, nil)
	var ledger struct {
		Entries []struct{ Kind, RequestID, ClientRequestID string }
	}
	if status != 200 || json.Unmarshal(b, &ledger) != nil {
		t.Fatalf("ledger: %d %.300s", status, b)
	}
	var hold bool
	for _, e := range ledger.Entries {
		if e.Kind != "admin" && e.RequestID != ours {
			t.Errorf("ledger line %+v: requestId is not ours (%s)", e, ours)
		}
		if e.Kind == "hold" {
			hold = e.ClientRequestID == "dealer-job-7"
		}
	}
	if !hold {
		t.Errorf("ledger %s: the hold's line does not keep the client's id", b)
	}
}

// A job's result in ranges, as a download resumes: 206 with
// Content-Range; a range past the end, or malformed, is 416 in JSON,
// saying the size; HEAD gives the length without the bytes; conditional
// requests are 206, 304 or a JSON 412.
func TestJobResultRanges(t *testing.T) {
	_, data := e2etest.VideoClip(t)
	// The job's end is waited for as a client does: its webhook.
	ended := make(chan string, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct{ Status string }
		json.NewDecoder(r.Body).Decode(&ev)
		select {
		case ended <- ev.Status:
		default:
		}
	}))
	defer hook.Close()
	s := e2etest.StartService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "MAX_VIDEO_SECONDS": "20", "RATE_LIMIT_PER_MINUTE": "10000",
		"WEBHOOK_SECRET": "ranges-webhook-secret-0123", "WEBHOOK_ALLOW_PRIVATE": "true"})
	_, key := s.Account(t, 5)
	status, _, body := e2etest.Post(t, s.URL+"/v1/video-blur", key, e2etest.File("video", data), e2etest.Field("webhookUrl", hook.URL+"/ended"))
	var sub struct{ ID string }
	if status != http.StatusAccepted || json.Unmarshal(body, &sub) != nil {
		t.Fatalf("submit: %d %s", status, body)
	}
	select {
	case st := <-ended:
		if st != "done" {
			t.Fatalf("the job ended %s", st)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("no webhook within 3 minutes")
	}
	url, auth := s.URL+"/v1/jobs/"+sub.ID+"/result", "Bearer "+key
	status, h, whole := send(t, http.MethodGet, url, http.Header{"Authorization": {auth}}, nil)
	if status != 200 || h.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("result: %d, Accept-Ranges %q", status, h.Get("Accept-Ranges"))
	}
	status, h, part := send(t, http.MethodGet, url, http.Header{"Authorization": {auth}, "Range": {"bytes=100-199"}}, nil)
	if want := "bytes 100-199/" + strconv.Itoa(len(whole)); status != http.StatusPartialContent || h.Get("Content-Range") != want || !bytes.Equal(part, whole[100:200]) {
		t.Errorf("Range 100-199: %d, Content-Range %q, %d bytes; want 206, %q, bytes 100 to 199", status, h.Get("Content-Range"), len(part), want)
	}
	status, h, b := send(t, http.MethodGet, url, http.Header{"Authorization": {auth}, "Range": {"bytes=999999999-"}}, nil)
	e2etest.WantError(t, status, h, b, http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable")
	if want := "bytes */" + strconv.Itoa(len(whole)); h.Get("Content-Range") != want || h.Get("Content-Disposition") != "" {
		t.Errorf("416: Content-Range %q, Content-Disposition %q; want %q and none", h.Get("Content-Range"), h.Get("Content-Disposition"), want)
	}
	status, h, b = send(t, http.MethodHead, url, http.Header{"Authorization": {auth}}, nil)
	if status != 200 || len(b) != 0 || h.Get("Content-Length") != strconv.Itoa(len(whole)) {
		t.Errorf("HEAD result: %d, %d bytes, Content-Length %q; want 200, none, %d", status, len(b), h.Get("Content-Length"), len(whole))
	}

	// A malformed Range is 416 like one past the end, saying the size.
	status, h, b = send(t, http.MethodGet, url, http.Header{"Authorization": {auth}, "Range": {"bytes=abc"}}, nil)
	e2etest.WantError(t, status, h, b, http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable")
	if want := "bytes */" + strconv.Itoa(len(whole)); h.Get("Content-Range") != want || !strings.Contains(errorMessage(b), `"bytes=abc"`) {
		t.Errorf("malformed Range: Content-Range %q, message %q; want %q and the Range named", h.Get("Content-Range"), errorMessage(b), want)
	}
	// Several ranges: one multipart/byteranges answer.
	status, h, b = send(t, http.MethodGet, url, http.Header{"Authorization": {auth}, "Range": {"bytes=0-9,20-29"}}, nil)
	if status != http.StatusPartialContent || !strings.HasPrefix(h.Get("Content-Type"), "multipart/byteranges") || !bytes.Contains(b, whole[20:30]) {
		t.Errorf("two ranges: %d %s; want 206 multipart/byteranges holding both", status, h.Get("Content-Type"))
	}
	// Conditional requests: resuming from the same file, not modified,
	// and a precondition that does not hold, in JSON like every failure.
	modified := h.Get("Last-Modified")
	status, h, b = send(t, http.MethodGet, url, http.Header{"Authorization": {auth}, "Range": {"bytes=100-199"}, "If-Range": {modified}}, nil)
	if status != http.StatusPartialContent || !bytes.Equal(b, whole[100:200]) {
		t.Errorf("If-Range %q (the result's Last-Modified): %d, %d bytes; want 206 and the range", modified, status, len(b))
	}
	status, _, b = send(t, http.MethodGet, url, http.Header{"Authorization": {auth}, "If-Modified-Since": {modified}}, nil)
	if status != http.StatusNotModified || len(b) != 0 {
		t.Errorf("If-Modified-Since its Last-Modified: %d with %d bytes; want 304 and no body", status, len(b))
	}
	status, h, b = send(t, http.MethodGet, url, http.Header{"Authorization": {auth}, "If-Unmodified-Since": {"Mon, 01 Jan 2001 00:00:00 GMT"}}, nil)
	e2etest.WantError(t, status, h, b, http.StatusPreconditionFailed, "precondition_failed")
	status, h, b = send(t, http.MethodGet, url, http.Header{"Authorization": {auth}, "If-Match": {`"not-this"`}}, nil)
	e2etest.WantError(t, status, h, b, http.StatusPreconditionFailed, "precondition_failed")
}
