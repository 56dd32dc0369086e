package apitest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"carphoto/internal/testenv/apitest"
)

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Doc.OpenAPI; got != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", got)
	}
}

// The checker must refuse what the document does not allow, or the
// end-to-end checks prove nothing.
func TestCheckerRefusesDrift(t *testing.T) {
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	jsonH := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	imgH := http.Header{"Content-Type": {"image/jpeg"}, "X-Request-Id": {"r1"},
		"X-Credits-Charged": {"1"}, "X-Credits-Remaining": {"9"}, "X-Plates-Found": {"1"}}
	tests := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		ok           bool
	}{
		{"photo answer", "POST", "/v1/blur-plates", 200, imgH, "\xff\xd8", true},
		{"photo answer without X-Plates-Found", "POST", "/v1/blur-plates", 200,
			http.Header{"Content-Type": {"image/jpeg"}, "X-Request-Id": {"r1"}, "X-Credits-Charged": {"1"}, "X-Credits-Remaining": {"9"}}, "x", false},
		{"photo answer as JSON", "POST", "/v1/car-shadow", 200, jsonH(), `{}`, false},
		{"documented error", "POST", "/v1/blur-plates", 400, jsonH(), `{"error":"image missing","code":"missing_image"}`, true},
		{"code of another status", "POST", "/v1/blur-plates", 400, jsonH(), `{"error":"x","code":"rate_limited"}`, false},
		{"undocumented status", "POST", "/v1/blur-plates", 418, jsonH(), `{"error":"x","code":"internal"}`, false},
		{"429 without Retry-After", "GET", "/v1/account", 429, jsonH(), `{"error":"x","code":"rate_limited"}`, false},
		{"429 with Retry-After", "GET", "/v1/account", 429, jsonH("Retry-After", "3"), `{"error":"x","code":"rate_limited"}`, true},
		{"extra body field", "GET", "/v1/assets", 200, jsonH(), `{"assets":[],"next":1}`, false},
		{"null list", "GET", "/v1/assets", 200, jsonH(), `{"assets":null}`, false},
		{"unknown route", "GET", "/nope", 404, jsonH(), `{"error":"no route","code":"not_found"}`, true},
		{"unknown route answered 200", "GET", "/nope", 200, jsonH(), `{}`, false},
		{"unknown operation", "POST", "/v1/car-wash", 400, jsonH(), `{"error":"x","code":"unknown_tool"}`, true},
		{"unknown_tool on another method", "GET", "/v1/car-wash", 400, jsonH(), `{"error":"x","code":"unknown_tool"}`, false},
		{"wrong method", "DELETE", "/admin/v1/accounts/acct_1", 405, jsonH("Allow", "GET, HEAD"), `{"error":"x","code":"method_not_allowed"}`, true},
		{"wrong method without Allow", "GET", "/v1/blur-plates", 405, jsonH(), `{"error":"x","code":"method_not_allowed"}`, false},
		{"wrong method answered 404", "DELETE", "/admin/v1/accounts/acct_1", 404, jsonH(), `{"error":"no route","code":"not_found"}`, false},
		{"wrong method answered 401", "POST", "/v1/jobs/vid_1", 401, jsonH("WWW-Authenticate", "Bearer"), `{"error":"x","code":"invalid_api_key"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "http://127.0.0.1:8080"+tt.path, nil)
			err := c.Check(req, tt.status, tt.header, []byte(tt.body))
			if (err == nil) != tt.ok {
				t.Errorf("Check = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name the path", err)
			}
		})
	}
}

// A webhook's body is held to its schema: every field, none more.
func TestCheckWebhook(t *testing.T) {
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		body string
		ok   bool
	}{
		{`{"id":"vid_1","status":"done","code":"","error":"","resultUrl":"/v1/jobs/vid_1/result"}`, true},
		{`{"id":"vid_1","status":"failed","code":"processing_failed","error":"x","resultUrl":""}`, true},
		{`{"id":"vid_1","status":"done","code":"","error":"","result_url":"/v1/jobs/vid_1/result"}`, false},
		{`{"id":"vid_1","status":"queued","code":"","error":"","resultUrl":""}`, false},
		{`not json`, false},
	} {
		if err := c.CheckWebhook("videoJobEnded", []byte(tt.body)); (err == nil) != tt.ok {
			t.Errorf("%s: %v, want ok %v", tt.body, err, tt.ok)
		}
	}
}
