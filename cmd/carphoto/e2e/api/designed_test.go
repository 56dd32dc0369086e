package api

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"

	"carphoto/internal/testenv/e2etest"
)

// plate-logo and a studio call with plates=logo say how many plates got
// the design (X-Plates-Designed, at most X-Plates-Found), and a replay of
// the call says it again; blur-plates, which designs nothing, does not
// send it.
func TestPlatesDesignedHeader(t *testing.T) {
	s := e2etest.StartService(t, nil)
	_, key := s.Account(t, 10)
	photo := samplePhoto(t)
	logo := e2etest.TwoColourLogo(t)
	counts := func(what string, h http.Header) (found, designed int) {
		t.Helper()
		found, err1 := strconv.Atoi(h.Get("X-Plates-Found"))
		designed, err2 := strconv.Atoi(h.Get("X-Plates-Designed"))
		if err1 != nil || err2 != nil || designed < 0 || designed > found {
			t.Errorf("%s: X-Plates-Found %q, X-Plates-Designed %q; want counts, designed at most found", what, h.Get("X-Plates-Found"), h.Get("X-Plates-Designed"))
		}
		return found, designed
	}

	call := []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", logo)}
	status, h, body := e2etest.PostIdem(t, s.URL+"/v1/plate-logo", key, "logo-1", call...)
	if status != http.StatusOK {
		t.Fatalf("plate-logo: %d %.200s", status, body)
	}
	_, designed := counts("plate-logo", h)
	if designed < 1 {
		t.Errorf("plate-logo on the sample car (a readable plate): X-Plates-Designed %d, want the design on it", designed)
	}
	status, rh, rbody := e2etest.PostIdem(t, s.URL+"/v1/plate-logo", key, "logo-1", call...)
	if status != http.StatusOK || !bytes.Equal(rbody, body) || rh.Get("Idempotent-Replayed") != "true" || rh.Get("X-Plates-Designed") != h.Get("X-Plates-Designed") {
		t.Errorf("the replay: %d replayed %q X-Plates-Designed %q; want the first answer's %q", status, rh.Get("Idempotent-Replayed"), rh.Get("X-Plates-Designed"), h.Get("X-Plates-Designed"))
	}

	status, h, body = e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", photo))
	if status != http.StatusOK || h.Get("X-Plates-Found") == "" {
		t.Fatalf("blur-plates: %d %.200s", status, body)
	}
	if got := h.Get("X-Plates-Designed"); got != "" {
		t.Errorf("blur-plates: X-Plates-Designed %q, want none (it designs nothing)", got)
	}

	status, h, body = e2etest.Post(t, s.URL+"/v1/car-cutout", key, e2etest.File("image", photo), e2etest.Field("plates", "logo"), e2etest.File("logo", logo))
	if status != http.StatusOK {
		t.Fatalf("car-cutout plates=logo: %d %.200s", status, body)
	}
	if _, studio := counts("car-cutout plates=logo", h); studio != designed {
		t.Errorf("car-cutout plates=logo: X-Plates-Designed %d, plate-logo %d on the same photo", studio, designed)
	}
	status, h, body = e2etest.Post(t, s.URL+"/v1/car-cutout", key, e2etest.File("image", photo), e2etest.Field("plates", "blur"))
	if status != http.StatusOK || h.Get("X-Plates-Designed") != "" {
		t.Errorf("car-cutout plates=blur: %d X-Plates-Designed %q, want none %.200s", status, h.Get("X-Plates-Designed"), body)
	}
}
