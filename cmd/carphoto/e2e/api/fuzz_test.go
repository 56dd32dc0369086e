package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"carphoto/internal/testenv/apitest"
	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/imgtest"
)

// fuzzRequests is how many requests TestFuzzAgainstDocument sends.
const fuzzRequests = 200

// Requests made from the document itself (kin-openapi's model of
// site/openapi.json), from fixed seeds: every operation, its fields and
// query parameters drawn from their schemas (enums, ranges, booleans,
// files) and as often wrong (junk, out of range, empty, unknown fields,
// another method, a bad Idempotency-Key). Every answer goes through TestMain's check against the
// document; here, besides, no empty value may be accepted, and the
// document may not stand a catch-all default in for a named status.
func TestFuzzAgainstDocument(t *testing.T) {
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range c.Doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses.Default() != nil {
				t.Errorf("%s %s has a default response: name each status", method, path)
			}
		}
	}
	const admin = "fuzz-admin-token-0123456789"
	s := e2etest.StartService(t, map[string]string{"ADMIN_TOKEN": admin, "VIDEO_DIR": t.TempDir(), "RATE_LIMIT_PER_MINUTE": "100000"})
	_, key := s.Account(t, 1000)
	// Real ids beside made-up ones, so that the paths with an id are
	// answered as often as refused: an asset of the caller's, and another
	// account for the admin API to rotate and revoke (not the caller's).
	other, _ := s.Account(t, 10)
	body, ct := e2etest.MultipartBody(t, e2etest.File("file", imgtest.Sample(t, "plate-design.png")))
	status, _, b := send(t, http.MethodPost, s.URL+"/v1/assets", multipartHeader(key, ct), body)
	var asset struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(b, &asset) != nil {
		t.Fatalf("create an asset: %d %s", status, b)
	}
	f := &fuzzer{rng: rand.New(rand.NewPCG(83, 1201)), photo: e2etest.SyntheticJPEG(t, 96, 64),
		ids: map[string][]string{
			"/admin/v1/": {other, other, "acct_x", "%20"},
			"/v1/assets": {asset.ID, asset.ID, "asset_x", ".."},
			"":           {"vid_x", other, "%20"},
		}}
	var ops []fuzzOp
	for path, item := range c.Doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops = append(ops, fuzzOp{path, method, op})
		}
	}
	slices.SortFunc(ops, func(a, b fuzzOp) int { return strings.Compare(a.method+a.path, b.method+b.path) })
	statuses, byOp := map[int]int{}, map[string]map[int]int{}
	for i := range fuzzRequests {
		op := ops[i%len(ops)]
		if i >= len(ops) {
			op = ops[f.rng.IntN(len(ops))]
		}
		req, empty := f.request(t, s.URL, op)
		switch {
		case strings.HasPrefix(op.path, "/admin/v1/"):
			req.Header.Set("Authorization", "Bearer "+admin)
		case op.path == "/admin/queues":
			req.SetBasicAuth("admin", admin)
		case f.rng.IntN(20) > 0:
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.URL, err)
		}
		res.Body.Close()
		statuses[res.StatusCode]++
		if byOp[op.method+" "+op.path] == nil {
			byOp[op.method+" "+op.path] = map[int]int{}
		}
		byOp[op.method+" "+op.path][res.StatusCode]++
		if empty != "" && res.StatusCode < 400 {
			t.Errorf("%s %s with %s empty: %d, want it refused", req.Method, req.URL.Path, empty, res.StatusCode)
		}
	}
	t.Logf("%d requests from seeds (83, 1201) over %d operations: statuses %v", fuzzRequests, len(ops), statuses)
	for _, op := range ops {
		t.Logf("%s %s: %v", op.method, op.path, byOp[op.method+" "+op.path])
	}
	if statuses[200]+statuses[201]+statuses[202]+statuses[204] < fuzzRequests/10 {
		t.Errorf("only %v succeeded: the requests are not reaching the operations", statuses)
	}
}

type fuzzOp struct {
	path, method string
	op           *openapi3.Operation
}

type fuzzer struct {
	rng   *rand.Rand
	photo []byte
	ids   map[string][]string // what a path's {id} is drawn from, by the path's start ("" for any other)
}

var pathParam = regexp.MustCompile(`\{(\w+)\}`)

// request draws one request for op; empty names a value sent empty, if
// one was.
func (f *fuzzer) request(t *testing.T, base string, op fuzzOp) (req *http.Request, empty string) {
	t.Helper()
	path := pathParam.ReplaceAllStringFunc(op.path, func(string) string {
		ids := f.ids[""]
		for start, these := range f.ids {
			if start != "" && strings.HasPrefix(op.path, start) {
				ids = these
			}
		}
		return ids[f.rng.IntN(len(ids))]
	})
	method := op.method
	if f.rng.IntN(12) == 0 {
		method = []string{http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodPost, http.MethodGet}[f.rng.IntN(5)]
	}
	var body []byte
	var contentType string
	if rb := op.op.RequestBody; rb != nil && rb.Value != nil {
		if media := rb.Value.Content.Get("multipart/form-data"); media != nil && media.Schema != nil {
			body, contentType, empty = f.multipart(t, media.Schema.Value)
		} else if media := rb.Value.Content.Get("application/json"); media != nil {
			body, contentType = f.json(media.Schema.Value), "application/json"
		}
	}
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	query := req.URL.Query()
	for _, p := range op.op.Parameters {
		if p.Value == nil || f.rng.IntN(3) > 0 {
			continue
		}
		switch p.Value.In {
		case "header":
			v := fmt.Sprintf("fuzz-%d", f.rng.IntN(1000))
			switch f.rng.IntN(6) {
			case 0:
				v, empty = "", p.Value.Name
			case 1:
				v = "with space"
			}
			req.Header[http.CanonicalHeaderKey(p.Value.Name)] = []string{v}
		case "query":
			var schema *openapi3.Schema
			if p.Value.Schema != nil {
				schema = p.Value.Schema.Value
			}
			v := f.value(schema)
			if v == "" {
				empty = p.Value.Name
			}
			query.Set(p.Value.Name, v)
		}
	}
	req.URL.RawQuery = query.Encode()
	if accept := f.rng.IntN(8); accept < 3 {
		req.Header.Set("Accept", []string{"image/png", "*/*", "image/webp;q=0.5, image/jpeg"}[accept])
	}
	return req, empty
}

// multipart draws a body from the form's schema.
func (f *fuzzer) multipart(t *testing.T, schema *openapi3.Schema) (body []byte, contentType, empty string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	names := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		prop := schema.Properties[name].Value
		file := prop != nil && prop.Format == "binary"
		switch {
		case file && (name == "image" || name == "file"):
			if f.rng.IntN(6) == 0 {
				continue // the photo missing
			}
		case slices.Contains(schema.Required, name):
		case f.rng.IntN(6) > 0:
			continue
		}
		if file {
			data := f.photo
			if f.rng.IntN(5) == 0 {
				data = []byte("not an image at all")
			}
			w, _ := mw.CreateFormFile(name, name+".jpg")
			w.Write(data)
			continue
		}
		v := f.value(prop)
		if v == "" {
			empty = strconv.Quote(name)
		}
		mw.WriteField(name, v)
	}
	if f.rng.IntN(15) == 0 {
		mw.WriteField("colour", "red") // a field no operation takes
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType(), empty
}

// value draws a text field's value from its schema, or a wrong one.
func (f *fuzzer) value(s *openapi3.Schema) string {
	switch f.rng.IntN(16) {
	case 0:
		return ""
	case 1:
		return "junk"
	}
	if s == nil {
		return "x"
	}
	if len(s.Enum) > 0 {
		return fmt.Sprint(s.Enum[f.rng.IntN(len(s.Enum))])
	}
	switch {
	case s.Type.Is("boolean"):
		return strconv.FormatBool(f.rng.IntN(2) == 0)
	case s.Type.Is("number"), s.Type.Is("integer"):
		lo, hi := 0.0, 1.0
		if s.Min != nil {
			lo = *s.Min
		}
		if s.Max != nil {
			hi = *s.Max
		}
		v := lo + f.rng.Float64()*(hi-lo)*1.2 // a sixth of them past the maximum
		if s.Type.Is("integer") {
			return strconv.Itoa(int(v))
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	case s.Format == "uri":
		return "http://127.0.0.1:1/x.jpg"
	}
	if s.Example != nil {
		return fmt.Sprint(s.Example)
	}
	return "x"
}

// json draws an admin body: its properties' types, sometimes wrong.
func (f *fuzzer) json(s *openapi3.Schema) []byte {
	if s == nil || f.rng.IntN(6) == 0 {
		return []byte(`{"amount": "lots"`)
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	var parts []string
	for _, name := range names {
		p := s.Properties[name]
		if f.rng.IntN(3) == 0 && !slices.Contains(s.Required, name) {
			continue
		}
		v := `"fuzz"`
		if p.Value != nil && p.Value.Type.Is("integer") {
			v = strconv.Itoa(f.rng.IntN(20) - 2)
		}
		parts = append(parts, strconv.Quote(name)+": "+v)
	}
	return []byte("{" + strings.Join(parts, ", ") + "}")
}
