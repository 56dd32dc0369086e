package server

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"carphoto/internal/testenv/apitest"
)

// camelCase is the one style of the API's field names: the contract's
// own (logoAssetId), in every JSON answer of /v1 and /admin/v1, the video
// job's webhook and every request field.
var camelCase = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// dataKeys are the objects whose keys are data, not field names:
// costPerOperation's are the operations' names, as in their URLs.
// costWithPlates's are two operations' names joined by "+", as the ledger names them.
var dataKeys = map[string]bool{"costPerOperation": true, "costWithPlates": true}

// checkFieldStyle (of TestFieldsAreDocumented) holds every field name openapi.json gives a
// JSON answer or a request body to camelCase, and every object it
// describes to its listed fields (additionalProperties false, or a map of
// values whose keys are data, such as costPerOperation's operations). As
// the end-to-end tests check every answer they get against the document
// (cmd/carphoto's TestMain), no answer can carry a name in another style.
func checkFieldStyle(t *testing.T, c *apitest.Checker) {
	w := &styleWalk{seen: map[*openapi3.Schema]bool{}, names: map[string]bool{}}
	answers := 0
	for name, item := range c.Doc.Webhooks {
		for method, op := range item.Operations() {
			if op.RequestBody != nil {
				for mt, media := range op.RequestBody.Value.Content {
					answers++
					w.walk(fmt.Sprintf("webhook %s %s %s", name, method, mt), media.Schema, false)
				}
			}
		}
	}
	if answers == 0 {
		t.Error("openapi.json describes no webhook")
	}
	for path, item := range c.Doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if op.RequestBody != nil {
				for mt, media := range op.RequestBody.Value.Content {
					if media.Schema != nil {
						w.walk(where+" request "+mt, media.Schema, false)
					}
				}
			}
			for status, res := range op.Responses.Map() {
				for mt, media := range res.Value.Content {
					if media.Schema != nil && strings.HasSuffix(mt, "json") {
						answers++
						w.walk(fmt.Sprintf("%s → %s %s", where, status, mt), media.Schema, false)
					}
				}
			}
		}
	}
	for _, e := range w.errs {
		t.Error(e)
	}
	names := make([]string, 0, len(w.names))
	for n := range w.names {
		names = append(names, n)
	}
	slices.Sort(names)
	t.Logf("%d JSON answers (operation × status, and the webhook's body) and the request bodies: %d object schemas, %d field names: %s",
		answers, len(w.seen), len(names), strings.Join(names, " "))
	if answers < 50 || len(names) < 40 {
		t.Errorf("only %d answers and %d names checked: the walk missed the document", answers, len(names))
	}
}

// styleWalk goes through schemas once each, keeping what it found.
type styleWalk struct {
	seen  map[*openapi3.Schema]bool
	names map[string]bool
	errs  []string
}

// walk checks the schema at ref; part is true for a part of an allOf,
// which may narrow fields of the others without listing them all.
func (w *styleWalk) walk(where string, ref *openapi3.SchemaRef, part bool) {
	if ref == nil || ref.Value == nil {
		return
	}
	s := ref.Value
	if ref.Ref != "" {
		where = ref.Ref
	}
	if w.seen[s] {
		return
	}
	if len(s.Properties) > 0 || s.Type.Is("object") {
		w.seen[s] = true
	}
	for name, p := range s.Properties {
		if dataKeys[lastField(where)] {
			continue
		}
		w.names[name] = true
		if !camelCase.MatchString(name) {
			w.errs = append(w.errs, fmt.Sprintf("%s: field %q is not camelCase", where, name))
		}
		w.walk(where+"."+name, p, false)
	}
	if len(s.Properties) > 0 && !part && !strings.Contains(where, " request ") && !closed(s) {
		w.errs = append(w.errs, fmt.Sprintf("%s: an answer's object must list its fields (additionalProperties false)", where))
	}
	w.walk(where+"[]", s.Items, false)
	w.walk(where+"{}", s.AdditionalProperties.Schema, false)
	for _, r := range s.AllOf {
		w.walk(where, r, true)
	}
	for _, l := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for _, r := range l {
			w.walk(where, r, false)
		}
	}
}

// closed reports whether s takes no fields beyond those it lists, or
// only values of one schema under keys that are data.
func closed(s *openapi3.Schema) bool {
	has := s.AdditionalProperties.Has
	return (has != nil && !*has) || s.AdditionalProperties.Schema != nil
}

// lastField is the last field name of a walk's place.
func lastField(where string) string {
	return where[strings.LastIndex(where, ".")+1:]
}
