package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"carphoto/internal/testenv/e2etest"
)

// TestOpenAPIServedWithoutKey fetches the document as a client generator
// would: no key, JSON, the three operations in it.
func TestOpenAPIServedWithoutKey(t *testing.T) {
	s := e2etest.StartService(t, nil)
	status, h, body := e2etest.Do(t, http.MethodGet, s.URL+"/v1/openapi.json", "", "", nil)
	if status != http.StatusOK || h.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/openapi.json: %d %q, want 200 application/json", status, h.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"blur-plates", "plate-logo", "car-shadow"} {
		if doc.Paths["/v1/"+op]["post"] == nil {
			t.Errorf("no POST /v1/%s in the document", op)
		}
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
}

// TestPagesServed: the pages and scripts come from the binary, with a
// policy that keeps the browser from loading anything from elsewhere.
func TestPagesServed(t *testing.T) {
	s := e2etest.StartService(t, nil)
	for _, c := range []struct{ path, contentType, contains string }{
		{"/", "text/html; charset=utf-8", `<script src="/try.js">`},
		{"/try.js", "text/javascript; charset=utf-8", `fetch("/v1/" + op`},
		{"/docs", "text/html; charset=utf-8", `spec-url="/v1/openapi.json"`},
		{"/docs/redoc.standalone.js", "text/javascript; charset=utf-8", "Redocly"},
	} {
		status, h, body := e2etest.Do(t, http.MethodGet, s.URL+c.path, "", "", nil)
		if status != http.StatusOK || !strings.EqualFold(h.Get("Content-Type"), c.contentType) || !strings.Contains(string(body), c.contains) {
			t.Errorf("GET %s: %d %q, want 200 %s containing %q", c.path, status, h.Get("Content-Type"), c.contentType, c.contains)
		}
		if strings.HasPrefix(c.contentType, "text/html") && !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q, want default-src 'self'", c.path, h.Get("Content-Security-Policy"))
		}
	}
}
