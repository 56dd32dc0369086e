// Package apitest checks the service's HTTP answers against its OpenAPI
// document (site.OpenAPI), for the tests: status, content type, headers and
// JSON body schema. The end-to-end tests send every request through
// Transport, so the document cannot drift from what the server does.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"carphoto/site"
)

// Checker validates answers against the document.
type Checker struct {
	Doc    *openapi3.T
	router routers.Router
	// unrouted stands for a path the document does not list: any
	// documented error; unknownTool for a POST to a name under /v1 that is
	// no operation, which may also be 400 unknown_tool; wrongMethod for a
	// method a listed path does not take: 405 only, whoever asks.
	unrouted, unknownTool, wrongMethod *openapi3.Operation
}

// Load parses and validates site.OpenAPI.
func Load() (*Checker, error) {
	doc, err := openapi3.NewLoader().LoadFromData(site.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("load openapi.json: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.json is not valid OpenAPI: %w", err)
	}
	// The document's server is "/", this host; the router would match it
	// against the request's host, so it routes by path alone.
	byPath := *doc
	byPath.Servers = nil
	r, err := legacy.NewRouter(&byPath)
	if err != nil {
		return nil, fmt.Errorf("route openapi.json: %w", err)
	}
	res := func(name string) *openapi3.ResponseRef {
		return &openapi3.ResponseRef{Ref: "#/components/responses/" + name, Value: doc.Components.Responses[name].Value}
	}
	for _, name := range []string{"NotFound", "MethodNotAllowed", "Unauthorized", "RateLimited", "Internal", "ServiceUnavailable", "BadPhotoRequest"} {
		if doc.Components.Responses[name] == nil {
			return nil, fmt.Errorf("openapi.json has no components.responses.%s", name)
		}
	}
	unrouted := &openapi3.Operation{Responses: openapi3.NewResponses(
		openapi3.WithStatus(http.StatusNotFound, res("NotFound")),
		openapi3.WithStatus(http.StatusMethodNotAllowed, res("MethodNotAllowed")),
		openapi3.WithStatus(http.StatusUnauthorized, res("Unauthorized")),
		openapi3.WithStatus(http.StatusTooManyRequests, res("RateLimited")),
		openapi3.WithStatus(http.StatusInternalServerError, res("Internal")),
		openapi3.WithStatus(http.StatusServiceUnavailable, res("ServiceUnavailable")),
	)}
	// A POST to a name under /v1 that is no operation is answered as an
	// operation's 400 (unknown_tool).
	unknownTool := &openapi3.Operation{Responses: openapi3.NewResponses()}
	for code, r := range unrouted.Responses.Map() {
		unknownTool.Responses.Set(code, r)
	}
	unknownTool.Responses.Set("400", res("BadPhotoRequest"))
	wrongMethod := &openapi3.Operation{Responses: openapi3.NewResponses(
		openapi3.WithStatus(http.StatusMethodNotAllowed, res("MethodNotAllowed")))}
	return &Checker{Doc: doc, router: r, unrouted: unrouted, unknownTool: unknownTool, wrongMethod: wrongMethod}, nil
}

// routedOtherwise says whether the document lists req's path with another
// method than req's.
func (c *Checker) routedOtherwise(req *http.Request) bool {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == req.Method {
			continue
		}
		other := req.Clone(req.Context())
		other.Method = m
		if _, _, err := c.router.FindRoute(other); err == nil {
			return true
		}
	}
	return false
}

// Check reports how the answer (status, header, body) to req departs from
// the document, or nil when it matches. A status the operation does not
// list is a mismatch.
func (c *Checker) Check(req *http.Request, status int, header http.Header, body []byte) error {
	// HEAD is answered wherever GET is, as GET's status and headers with
	// no body: it is checked as GET's answer, the body left out.
	if req.Method == http.MethodOptions && status == http.StatusNoContent && len(body) == 0 {
		// A CORS preflight, answered on any path by the CORS protocol, not
		// by an operation (the document's info says so).
		return nil
	}
	head := req.Method == http.MethodHead
	routed := req
	if head {
		routed = req.Clone(req.Context())
		routed.Method = http.MethodGet
	}
	route, params, err := c.router.FindRoute(routed)
	if err != nil {
		var re *routers.RouteError
		if !errors.As(err, &re) || (re.Reason != routers.ErrPathNotFound.Error() && re.Reason != routers.ErrMethodNotAllowed.Error()) {
			return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
		}
		op := c.unrouted
		switch {
		case c.routedOtherwise(routed):
			op = c.wrongMethod
		case req.Method == http.MethodPost && strings.HasPrefix(req.URL.Path, "/v1/"):
			op = c.unknownTool
		}
		route = &routers.Route{Spec: c.Doc, Path: req.URL.Path, Method: routed.Method, Operation: op}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: routed, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: head},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(req.Context(), in); err != nil {
		return fmt.Errorf("%s %s → %d %s: %w (body %.200q)", req.Method, req.URL.Path, status, header.Get("Content-Type"), err, body)
	}
	return nil
}

// Transport is an http.RoundTripper that checks every answer it carries
// and keeps the mismatches for Failures.
type Transport struct {
	Base    http.RoundTripper
	Checker *Checker

	mu       sync.Mutex
	checked  int
	failures []error
}

// RoundTrip sends req through Base, reads the whole answer and checks it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.Base.RoundTrip(req)
	if err != nil {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		// The caller sees the same cut-short body; nothing to check.
		return res, nil
	}
	cerr := t.Checker.Check(req, res.StatusCode, res.Header, body)
	t.mu.Lock()
	t.checked++
	if cerr != nil {
		t.failures = append(t.failures, cerr)
	}
	t.mu.Unlock()
	return res, nil
}

// Failures returns the answers checked so far and the mismatches among them.
func (t *Transport) Failures() (checked int, failures []error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.checked, append([]error(nil), t.failures...)
}

// CheckWebhook reports how a webhook's body departs from the JSON schema
// the document gives the webhook name, or nil when it matches.
func (c *Checker) CheckWebhook(name string, body []byte) error {
	item := c.Doc.Webhooks[name]
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		return fmt.Errorf("openapi.json has no webhook %q with a body", name)
	}
	media := item.Post.RequestBody.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		return fmt.Errorf("webhook %q has no application/json schema", name)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("webhook %q: the body is not JSON: %w (%.200q)", name, err, body)
	}
	if err := media.Schema.Value.VisitJSON(v); err != nil {
		return fmt.Errorf("webhook %q: %w (body %.200q)", name, err, body)
	}
	return nil
}
