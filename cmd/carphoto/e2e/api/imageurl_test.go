package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
)

// sources is a loopback HTTP server standing in for a dealer's CDN.
func sources(t *testing.T, photo, logo []byte) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/car.jpg", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/jpeg")
		w.Write(photo)
	})
	mux.HandleFunc("/logo.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(logo)
	})
	mux.HandleFunc("/big.jpg", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte{0xff}, 300_000))
	})
	mux.HandleFunc("/slow.jpg", func(w http.ResponseWriter, r *http.Request) {
		w.Write(photo[:100])
		w.(http.Flusher).Flush()
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>not a photo</html>"))
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/car.jpg", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// errorText is the error field of a JSON failure.
func errorText(t *testing.T, body []byte) string {
	t.Helper()
	var e struct{ Error string }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body is not JSON: %.200s", body)
	}
	return e.Error
}

// A photo and a design named by URL are fetched and processed like
// uploads and charged once; every way a fetch can fail is a 4xx naming
// the field, charged nothing.
func TestImageURL(t *testing.T) {
	s := e2etest.StartService(t, map[string]string{"ALLOW_PRIVATE_URLS": "true", "UPLOAD_TIMEOUT": "1s", "MAX_UPLOAD_BYTES": "200000"})
	photo := e2etest.SyntheticJPEG(t, 320, 240)
	src := sources(t, photo, e2etest.TwoColourLogo(t))
	id, key := s.Account(t, 10)

	status, h, body := e2etest.Post(t, s.URL+"/v1/logo-overlay", key, e2etest.Field("imageUrl", src.URL+"/hop"), e2etest.Field("logoUrl", src.URL+"/logo.png"))
	if status != http.StatusOK || h.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("logo-overlay by URL: %d %s %.200s", status, h.Get("Content-Type"), body)
	}
	if got := s.Credits(t, id); got != 9 {
		t.Fatalf("credits after a call by URL: %d, want 9", got)
	}

	// A fetched image is held to an upload's bounds from its header before
	// any work (hostile_test.go's degenerate strip and oversized canvas).
	strip := e2etest.GrayPNG(t, 59999999, 1)
	stripSrc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(strip)
	}))
	t.Cleanup(stripSrc.Close)

	for _, tc := range []struct {
		name   string
		path   string
		parts  []e2etest.Part
		status int
		code   string
		says   string
	}{
		{"404 source", "/v1/blur-plates", []e2etest.Part{e2etest.Field("imageUrl", src.URL+"/nothing.jpg")}, 400, "invalid_params", "imageUrl: the source answered 404"},
		{"not an image", "/v1/car-cutout", []e2etest.Part{e2etest.Field("imageUrl", src.URL+"/page.html")}, 400, "invalid_params", "imageUrl: "},
		{"oversize source", "/v1/blur-plates", []e2etest.Part{e2etest.Field("imageUrl", src.URL+"/big.jpg")}, 413, "payload_too_large", "imageUrl"},
		{"slow source", "/v1/car-shadow", []e2etest.Part{e2etest.Field("imageUrl", src.URL+"/slow.jpg")}, 408, "request_timeout", "imageUrl: the source did not send the image within 1s"},
		{"unreachable", "/v1/blur-plates", []e2etest.Part{e2etest.Field("imageUrl", "http://127.0.0.1:1/car.jpg")}, 400, "invalid_params", "imageUrl: the source could not be reached"},
		{"not http", "/v1/blur-plates", []e2etest.Part{e2etest.Field("imageUrl", "ftp://example.com/car.jpg")}, 400, "invalid_params", "imageUrl must be an absolute http or https URL"},
		{"both image and imageUrl", "/v1/blur-plates", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("imageUrl", src.URL+"/car.jpg")}, 400, "invalid_params", "exactly one of image (a file) or imageUrl"},
		{"neither", "/v1/blur-plates", []e2etest.Part{e2etest.Field("style", "pixelate")}, 400, "missing_image", "imageUrl"},
		{"logoUrl and logo", "/v1/plate-logo", []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("logoUrl", src.URL+"/logo.png")}, 400, "invalid_params", "exactly one of logo (a file), logoAssetId or logoUrl"},
		{"59999999×1 PNG by URL", "/v1/car-shadow", []e2etest.Part{e2etest.Field("imageUrl", stripSrc.URL+"/strip.png")}, 400, "invalid_params", "each side may be at most 20000 pixels"},
		{"59999999×1 PNG design by URL", "/v1/plate-logo", []e2etest.Part{e2etest.Field("imageUrl", src.URL+"/car.jpg"), e2etest.Field("logoUrl", stripSrc.URL+"/strip.png")}, 400, "invalid_params", "logoUrl: image is 59999999×1; each side may be at most 20000 pixels"},
		{"canvas too large by URL", "/v1/car-shadow", []e2etest.Part{e2etest.Field("imageUrl", src.URL+"/car.jpg"), e2etest.Field("crop", "true"), e2etest.Field("padding", "10000")}, 400, "invalid_params", "the limit is 60 MP"},
		{"logoUrl 404", "/v1/logo-overlay", []e2etest.Part{e2etest.Field("imageUrl", src.URL+"/car.jpg"), e2etest.Field("logoUrl", src.URL+"/gone.png")}, 400, "invalid_params", "logoUrl: the source answered 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := e2etest.Post(t, s.URL+tc.path, key, tc.parts...)
			e2etest.WantError(t, status, h, body, tc.status, tc.code)
			if msg := errorText(t, body); !strings.Contains(msg, tc.says) {
				t.Errorf("error %q, want it to say %q", msg, tc.says)
			}
			if got := s.Credits(t, id); got != 9 {
				t.Errorf("credits after the failure: %d, want 9 (uncharged)", got)
			}
		})
	}
}

// Without ALLOW_PRIVATE_URLS a URL on loopback is refused, in any spelling,
// and the source is never reached.
func TestImageURLLoopbackRefusedByDefault(t *testing.T) {
	s := e2etest.StartService(t, nil)
	hits := 0
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	t.Cleanup(src.Close)
	id, key := s.Account(t, 5)
	port := src.URL[strings.LastIndex(src.URL, ":"):]
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "[::1]", "0x7f000001"} {
		status, h, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.Field("imageUrl", "http://"+host+port+"/car.jpg"))
		e2etest.WantError(t, status, h, body, 400, "invalid_params")
		if msg := errorText(t, body); !strings.HasPrefix(msg, "imageUrl: ") {
			t.Errorf("%s: error %q, want it to name imageUrl", host, msg)
		}
	}
	if hits != 0 {
		t.Errorf("the loopback source was reached %d times, want never", hits)
	}
	if got := s.Credits(t, id); got != 5 {
		t.Errorf("credits: %d, want 5 (uncharged)", got)
	}
}
