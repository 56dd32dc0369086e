package main

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestOpenAPIServedWithoutKey fetches the document as a client generator
// would: no key, JSON, the three operations in it.
func TestOpenAPIServedWithoutKey(t *testing.T) {
	s := startService(t, nil)
	status, h, body := do(t, http.MethodGet, s.url+"/v1/openapi.json", "", "", nil)
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
