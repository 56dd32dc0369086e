package api

import (
	"bytes"
	"encoding/json"
	"image"
	"image/draw"
	"image/jpeg"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"carphoto/internal/testenv/e2etest"
)

// sampleBackdrop is docs/samples/backdrop.jpg, the README's backdrop.
func sampleBackdrop(t *testing.T) []byte { return sample(t, "backdrop.jpg") }

// A listing photo in one call, through the whole service: the plates
// hidden on the studio backdrop, priced and charged as the two operations
// together, once; the sides that cut a car off named, or refused with
// requireWholeCar; the car's scale on the backdrop always said. Failures
// are uncharged.
func TestStudio(t *testing.T) {
	s := e2etest.StartService(t, nil)
	id, key := s.Account(t, 12)
	photo, backdrop := samplePhoto(t), sampleBackdrop(t)
	balance := int64(12)
	charged := func(t *testing.T, what string, h http.Header, credits int64) {
		t.Helper()
		balance -= credits
		if got := h.Get("X-Credits-Charged"); got != strconv.FormatInt(credits, 10) {
			t.Errorf("%s: X-Credits-Charged %q, want %d", what, got, credits)
		}
		if got := s.Credits(t, id); got != balance {
			t.Errorf("%s: balance %d, want %d", what, got, balance)
		}
	}

	// blur-plates on the sample photo, then car-shadow with plates=blur on
	// the sample backdrop: the same plates, two credits in one charge, the
	// car's scale said.
	status, h, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", photo))
	if status != http.StatusOK {
		t.Fatalf("blur-plates: %d %.200s", status, body)
	}
	charged(t, "blur-plates", h, 1)
	plates := h.Get("X-Plates-Found")
	studioCall := []e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", backdrop), e2etest.Field("plates", "blur")}
	status, h, body = e2etest.PostIdem(t, s.URL+"/v1/car-shadow", key, "listing-1", studioCall...)
	if status != http.StatusOK || h.Get("Content-Type") != "image/png" {
		t.Fatalf("car-shadow plates=blur on the backdrop: %d %s %.200s", status, h.Get("Content-Type"), body)
	}
	charged(t, "car-shadow plates=blur", h, 2)
	if got := h.Get("X-Plates-Found"); got != plates || got == "0" {
		t.Errorf("car-shadow plates=blur: X-Plates-Found %q, blur-plates found %q on the same photo", got, plates)
	}
	if scale, err := strconv.ParseFloat(h.Get("X-Car-Scale"), 64); err != nil || scale <= 0 || scale > 0.8 {
		t.Errorf("X-Car-Scale %q, want the scale used (at most the default 0.8)", h.Get("X-Car-Scale"))
	}
	if got := h.Get("X-Car-Truncated"); got != "" {
		t.Errorf("the sample car, wholly in view: X-Car-Truncated %q, want none", got)
	}
	// Retried with its Idempotency-Key: the same answer and headers, not
	// charged again.
	rstatus, rh, rbody := e2etest.PostIdem(t, s.URL+"/v1/car-shadow", key, "listing-1", studioCall...)
	if rstatus != http.StatusOK || !bytes.Equal(rbody, body) || rh.Get("Idempotent-Replayed") != "true" ||
		rh.Get("X-Car-Scale") != h.Get("X-Car-Scale") || rh.Get("X-Plates-Found") != h.Get("X-Plates-Found") || rh.Get("X-Credits-Charged") != "2" {
		t.Errorf("the retry: %d replayed %q scale %q plates %q charged %q; want the first answer again with its headers",
			rstatus, rh.Get("Idempotent-Replayed"), rh.Get("X-Car-Scale"), rh.Get("X-Plates-Found"), rh.Get("X-Credits-Charged"))
	}
	if got := s.Credits(t, id); got != balance {
		t.Errorf("after the retry: balance %d, want %d (charged once)", got, balance)
	}

	// /v1/account lists the price and shows the balance.
	status, _, body = e2etest.Do(t, http.MethodGet, s.URL+"/v1/account", key, "", nil)
	var acct struct {
		Credits        int64
		CostWithPlates map[string]int64 `json:"costWithPlates"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &acct) != nil || acct.Credits != balance ||
		acct.CostWithPlates["car-shadow+blur-plates"] != 2 || acct.CostWithPlates["car-cutout+plate-logo"] != 2 {
		t.Errorf("/v1/account: %d %s; want %d credits and the price of plates with car-shadow and car-cutout, 2", status, body, balance)
	}

	// plates=logo with a saved design on a saved backdrop: both images
	// from the library, one call, two credits.
	status, _, body = e2etest.Post(t, s.URL+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "dealer.png", Data: e2etest.TwoColourLogo(t)})
	var design struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(body, &design) != nil {
		t.Fatalf("save a design: %d %s", status, body)
	}
	status, _, body = e2etest.Post(t, s.URL+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "studio.jpg", Data: backdrop}, e2etest.Field("kind", "backdrop"))
	var studio struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(body, &studio) != nil {
		t.Fatalf("save a backdrop: %d %s", status, body)
	}
	status, h, body = e2etest.Post(t, s.URL+"/v1/car-cutout", key, e2etest.File("image", photo), e2etest.Field("plates", "logo"),
		e2etest.Field("logoAssetId", design.ID), e2etest.Field("backgroundAssetId", studio.ID), e2etest.Field("format", "jpeg"))
	if status != http.StatusOK || h.Get("Content-Type") != "image/jpeg" || h.Get("X-Car-Scale") == "" {
		t.Fatalf("car-cutout plates=logo, design and backdrop saved: %d %s scale %q %.200s", status, h.Get("Content-Type"), h.Get("X-Car-Scale"), body)
	}
	charged(t, "car-cutout plates=logo", h, 2)

	// Refusals and failures, none charged.
	for _, tc := range []struct {
		name   string
		path   string
		parts  []e2etest.Part
		status int
		code   string
		says   string
	}{
		{"a design without plates=logo", "/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("plates", "blur")},
			400, "invalid_params", "with plates=logo"},
		{"plates=logo without a design", "/v1/car-cutout", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("plates", "logo")},
			400, "invalid_params", "plates=logo puts your design on the plates"},
		{"an unknown plates", "/v1/car-cutout", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("plates", "hide")},
			400, "invalid_params", "plates must be one of keep, blur, pixelate, white, black, logo"},
		{"a design that fails to decode in the worker", "/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("plates", "logo"), e2etest.File("logo", scrambled(e2etest.TwoColourLogo(t)))},
			400, "invalid_params", "logo"},
	} {
		status, h, body := e2etest.Post(t, s.URL+tc.path, key, tc.parts...)
		e2etest.WantError(t, status, h, body, tc.status, tc.code)
		if !strings.Contains(string(body), tc.says) {
			t.Errorf("%s: %s, want it to say %q", tc.name, body, tc.says)
		}
		if got := s.Credits(t, id); got != balance {
			t.Errorf("%s: balance %d, want %d (uncharged)", tc.name, got, balance)
		}
	}

	// Two credits are needed: one is not enough.
	_, poor := s.Account(t, 1)
	status, h, body = e2etest.Post(t, s.URL+"/v1/car-shadow", poor, e2etest.File("image", photo), e2etest.Field("plates", "blur"))
	e2etest.WantError(t, status, h, body, http.StatusPaymentRequired, "insufficient_credits")

	// A car the photo's edge cuts off (the sample cropped through its bonnet
	// on the right and its roof at the top): named, and refused with
	// requireWholeCar.
	cut := cropJPEG(t, photo, image.Rect(0, 90, 380, 399))
	status, h, body = e2etest.Post(t, s.URL+"/v1/car-cutout", key, e2etest.File("image", cut))
	if status != http.StatusOK || !strings.Contains(h.Get("X-Car-Truncated"), "right") || !strings.Contains(h.Get("X-Car-Truncated"), "top") {
		t.Errorf("car-cutout of the cropped sample: %d, X-Car-Truncated %q, want the right and top sides named %.200s", status, h.Get("X-Car-Truncated"), body)
	}
	charged(t, "car-cutout of the cropped sample", h, 1)
	status, h, body = e2etest.Post(t, s.URL+"/v1/car-shadow", key, e2etest.File("image", cut), e2etest.File("backgroundImage", backdrop), e2etest.Field("plates", "blur"), e2etest.Field("requireWholeCar", "true"))
	e2etest.WantError(t, status, h, body, http.StatusUnprocessableEntity, "car_truncated")
	if !strings.Contains(string(body), "right") {
		t.Errorf("car_truncated: %s, want the sides named", body)
	}
	if got := s.Credits(t, id); got != balance {
		t.Errorf("car_truncated: balance %d, want %d (uncharged)", got, balance)
	}
}

// cropJPEG returns the JPEG photo cut to r.
func cropJPEG(t *testing.T, photo []byte, r image.Rectangle) []byte {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(photo))
	if err != nil {
		t.Fatal(err)
	}
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Rect, img, r.Min, draw.Src)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, out, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
