package server

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

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
