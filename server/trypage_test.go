package server

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"carphoto"
	"carphoto/internal/netguard"
	"carphoto/objstore"
	"carphoto/video"
)

// The try-it page carries the demo key to a visitor on loopback in the
// zero-setup mode only: not to another address, not through a proxy that
// names its client, never when there is no demo key (a deployment). The
// browser's view is TestTryItPageDemoKey (cmd/carphoto).
func TestTryPageDemoKey(t *testing.T) {
	const key = "cp_live_demo0123456789"
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for _, tc := range []struct {
		name    string
		demoKey string
		remote  string
		header  string
		filled  bool
	}{
		{"loopback", key, "127.0.0.1:50000", "", true},
		{"IPv6 loopback", key, "[::1]:50000", "", true},
		{"a neighbour", key, "192.168.1.20:50000", "", false},
		{"through a proxy", key, "127.0.0.1:50000", "X-Forwarded-For", false},
		{"through a Forwarded proxy", key, "127.0.0.1:50000", "Forwarded", false},
		{"a deployment", "", "127.0.0.1:50000", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{DemoKey: tc.demoKey, ZeroSetup: tc.demoKey != ""}, zerolog.Nop(), rdb, nil, nil)
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RemoteAddr = tc.remote
			if tc.header != "" {
				req.Header.Set(tc.header, "203.0.113.9")
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != 200 || !strings.Contains(body, `<input id="key" `) {
				t.Fatalf("GET /: %d, key field present: %v", rec.Code, strings.Contains(body, `id="key"`))
			}
			if got := strings.Contains(body, `value="`+key+`"`); got != tc.filled {
				t.Errorf("key filled in: %v, want %v", got, tc.filled)
			}
			if tc.filled && rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("a page with the key has Cache-Control %q, want no-store", rec.Header().Get("Cache-Control"))
			}
		})
	}
}

// A private imageUrl refused in the zero-setup mode says which setting
// lets it through; a deployment's refusal does not mention it.
func TestPrivateURLHint(t *testing.T) {
	inside, _ := source(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) })
	for _, zero := range []bool{true, false} {
		s := fetchServer(netguard.Guard{})
		s.cfg.ZeroSetup = zero
		_, err := s.fetch(context.Background(), "imageUrl", inside.URL)
		msg := carphoto.ErrorMessage(err)
		if carphoto.ErrorCode(err) != carphoto.EInvalidParams || !strings.Contains(msg, "only public addresses are fetched") {
			t.Fatalf("zero-setup %v: %v, want invalid_params refusing the address", zero, err)
		}
		if got := strings.Contains(msg, "ALLOW_PRIVATE_URLS=true"); got != zero {
			t.Errorf("zero-setup %v: message %q names ALLOW_PRIVATE_URLS: %v", zero, msg, got)
		}
	}
}

// A private webhookUrl refused in the zero-setup mode says which setting
// lets it through, as a private imageUrl does; a deployment's does not.
func TestPrivateWebhookHint(t *testing.T) {
	store, err := objstore.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, zero := range []bool{true, false} {
		s := &Server{cfg: Config{ZeroSetup: zero, Video: VideoConfig{Store: store, MaxBytes: 1 << 20,
			Notifier: video.Notifier{Secret: []byte("test-webhook-secret-0123")}}}}
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("video", "clip.mp4")
		fw.Write([]byte("not looked at before the fields are checked"))
		mw.WriteField("webhookUrl", "http://127.0.0.1:9/done")
		mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/v1/video-blur", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		_, _, _, err := s.readVideo(echo.New().NewContext(req, httptest.NewRecorder()), "vid_test")
		msg := carphoto.ErrorMessage(err)
		if carphoto.ErrorCode(err) != carphoto.EInvalidParams || !strings.Contains(msg, "public addresses only") {
			t.Fatalf("zero-setup %v: %v, want invalid_params refusing the address", zero, err)
		}
		if got := strings.Contains(msg, "ALLOW_PRIVATE_URLS=true"); got != zero {
			t.Errorf("zero-setup %v: message %q names ALLOW_PRIVATE_URLS: %v", zero, msg, got)
		}
	}
}
