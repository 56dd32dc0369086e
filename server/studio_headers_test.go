package server

import (
	"net/http"
	"slices"
	"testing"

	"carphoto/imageops"
	"carphoto/jobs"
)

// A studio answer whose car had a person cut out of its front says so in
// X-Car-Occluded (and one without does not), kept for an idempotent
// replay and readable by an allowed origin, as X-Car-Truncated is.
func TestCarOccludedHeader(t *testing.T) {
	for _, op := range []imageops.Op{imageops.CarShadow, imageops.CarCutout} {
		h := http.Header{}
		studioHeaders(h, imageops.Params{Op: op}, &jobs.Result{CarOccluded: true})
		if got := h.Get("X-Car-Occluded"); got != "person" {
			t.Errorf("%s, a person cut out of the car's front: X-Car-Occluded %q, want person", op, got)
		}
		h = http.Header{}
		studioHeaders(h, imageops.Params{Op: op}, &jobs.Result{CarTruncated: []string{"left"}})
		if _, ok := h["X-Car-Occluded"]; ok {
			t.Errorf("%s, nobody in front: X-Car-Occluded %q, want none", op, h.Get("X-Car-Occluded"))
		}
	}
	if !slices.Contains(replayedHeaders, "X-Car-Occluded") {
		t.Error("X-Car-Occluded is not replayed with an idempotent answer")
	}
	if !slices.Contains(exposedHeaders, "X-Car-Occluded") {
		t.Error("X-Car-Occluded is not readable by an allowed origin")
	}
}
