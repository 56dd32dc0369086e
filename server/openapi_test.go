package server

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"carphoto/imageops"
	"carphoto/internal/testenv/apitest"
	"carphoto/metrics"
)

// TestEveryRouteIsDocumented compares the routes Echo serves with the
// operations openapi.json lists, both ways.
func TestEveryRouteIsDocumented(t *testing.T) {
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	// Every optional route on; the client never connects.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	s := New(Config{AdminToken: strings.Repeat("a", 16), Metrics: metrics.New()}, zerolog.Nop(), rdb, nil, nil)
	param := regexp.MustCompile(`:(\w+)`)
	served := map[string]bool{}
	for _, r := range s.e.Routes() {
		// Echo's catch-alls answer not_found, method_not_allowed or
		// unknown_tool; the document describes those as errors.
		if strings.HasSuffix(r.Path, "*") || strings.HasPrefix(r.Method, "echo_route_") {
			continue
		}
		// HEAD is answered wherever GET is (the document says so once,
		// in MethodNotAllowed): it is GET's operation.
		method := r.Method
		if method == http.MethodHead {
			method = http.MethodGet
		}
		served[method+" "+param.ReplaceAllString(r.Path, "{$1}")] = true
	}
	documented := map[string]bool{}
	for path, item := range c.Doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for k := range served {
		if !documented[k] {
			t.Errorf("%s is served but not in openapi.json", k)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("%s is in openapi.json but not served", k)
		}
	}
	if t.Failed() {
		keys := make([]string, 0, len(served))
		for k := range served {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.Logf("served: %s", strings.Join(keys, ", "))
	}
}

// TestFieldsAreDocumented compares the fields each photo operation
// accepts with the multipart properties openapi.json lists for it, both
// ways: a field the server takes (a backdrop's, say) cannot be missing
// from the document, nor a documented one be refused as unknown. Every
// field name, of requests and of JSON answers, is camelCase
// (checkFieldStyle).
func TestFieldsAreDocumented(t *testing.T) {
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("camelCase", func(t *testing.T) { checkFieldStyle(t, c) })
	for _, op := range imageops.Ops {
		accepted := acceptedFields(op)
		item := c.Doc.Paths.Find("/v1/" + string(op))
		if item == nil || item.Post == nil || item.Post.RequestBody == nil {
			t.Errorf("%s: no POST /v1/%s with a request body in openapi.json", op, op)
			continue
		}
		media := item.Post.RequestBody.Value.Content.Get("multipart/form-data")
		if media == nil || media.Schema == nil {
			t.Errorf("%s: no multipart/form-data schema", op)
			continue
		}
		var documented []string
		for name := range media.Schema.Value.Properties {
			documented = append(documented, name)
		}
		slices.Sort(documented)
		want := slices.Clone(accepted)
		slices.Sort(want)
		if !slices.Equal(documented, want) {
			t.Errorf("%s: openapi.json lists %v, the server accepts %v", op, documented, want)
		}
	}
}

// The API's lists of hiding styles follow the one Go list, imageops.Styles:
// blur-plates' and video-blur's style, car-shadow's and car-cutout's
// plates (keep, the styles, logo).
func TestStyleEnumsFollowStyles(t *testing.T) {
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	var styles []string
	for _, st := range imageops.Styles {
		styles = append(styles, string(st))
	}
	for path, field := range map[string]string{"/v1/blur-plates": "style", "/v1/video-blur": "style", "/v1/car-shadow": "plates", "/v1/car-cutout": "plates"} {
		want := styles
		if field == "plates" {
			want = slices.Concat([]string{"keep"}, styles, []string{"logo"})
		}
		item := c.Doc.Paths.Find(path)
		if item == nil || item.Post == nil || item.Post.RequestBody == nil {
			t.Errorf("%s: not documented", path)
			continue
		}
		prop := item.Post.RequestBody.Value.Content.Get("multipart/form-data").Schema.Value.Properties[field]
		if prop == nil {
			t.Errorf("%s: no %s field", path, field)
			continue
		}
		var got []string
		for _, v := range prop.Value.Enum {
			got = append(got, fmt.Sprint(v))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s %s: openapi.json lists %v, imageops.Styles makes %v", path, field, got, want)
		}
	}
}

// TestErrorCodesDocumented holds openapi.json's ErrorCode to the one code
// set (statuses), and every error answer it describes to codes of its
// own status: a code added, or moved to another status, cannot leave the
// document stale.
func TestErrorCodesDocumented(t *testing.T) {
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, v := range c.Doc.Components.Schemas["ErrorCode"].Value.Enum {
		documented = append(documented, fmt.Sprint(v))
	}
	var codes []string
	for code := range statuses {
		codes = append(codes, code)
	}
	slices.Sort(documented)
	slices.Sort(codes)
	if !slices.Equal(documented, codes) {
		t.Errorf("ErrorCode lists %v; the server's codes are %v", documented, codes)
	}
	for path, item := range c.Doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, res := range op.Responses.Map() {
				if res.Value == nil || res.Value.Content.Get("application/json") == nil {
					continue
				}
				for _, code := range errorCodes(res.Value.Content.Get("application/json").Schema) {
					if got := fmt.Sprint(statuses[code]); got != status {
						t.Errorf("%s %s: its %s answer lists code %s, which the server answers %s", method, path, status, code, got)
					}
				}
			}
		}
	}
}

// errorCodes are the codes an error answer's schema (Error, narrowed by
// an allOf to an enum of codes) allows.
func errorCodes(s *openapi3.SchemaRef) []string {
	if s == nil || s.Value == nil {
		return nil
	}
	var codes []string
	for _, part := range s.Value.AllOf {
		if part.Value == nil || part.Ref != "" { // Error itself allows every code
			continue
		}
		if code := part.Value.Properties["code"]; code != nil && code.Value != nil {
			for _, v := range code.Value.Enum {
				codes = append(codes, fmt.Sprint(v))
			}
		}
	}
	return codes
}

// TestCORSExposesDocumentedHeaders: a page on an allowed origin may read
// every header openapi.json lists on a /v1 answer (those not
// CORS-safelisted), so a header added to the document and the server
// cannot be left unreadable to browsers.
func TestCORSExposesDocumentedHeaders(t *testing.T) {
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	safelisted := []string{"Cache-Control", "Content-Language", "Content-Length", "Content-Type", "Expires", "Last-Modified", "Pragma"}
	for path, item := range c.Doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for method, op := range item.Operations() {
			for status, res := range op.Responses.Map() {
				if res.Value == nil {
					continue
				}
				for name := range res.Value.Headers {
					if !slices.Contains(exposedHeaders, name) && !slices.Contains(safelisted, name) {
						t.Errorf("%s %s: its %s answer's %s is not in Access-Control-Expose-Headers", method, path, status, name)
					}
				}
			}
		}
	}
}
