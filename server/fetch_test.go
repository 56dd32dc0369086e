package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"carphoto"
	"carphoto/imageops"
	"carphoto/internal/netguard"
)

// fetchServer is a Server with only what fetch needs: 1 KiB uploads
// within 300 ms, fetched through guard.
func fetchServer(guard netguard.Guard) *Server {
	return &Server{
		cfg:     Config{MaxUploadBytes: 1024, UploadTimeout: 300 * time.Millisecond},
		fetcher: newFetchClient(guard),
	}
}

// source is a loopback HTTP server answering with h, counting its hits.
func source(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestFetch(t *testing.T) {
	body := strings.Repeat("x", 1000)
	ok, _ := source(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) })
	big, _ := source(t, func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // no Content-Length: the cap is met while reading
		w.Write([]byte(strings.Repeat("x", 2000)))
	})
	slow, _ := source(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("xx"))
		w.(http.Flusher).Flush()
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	missing, _ := source(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	loop, _ := source(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, r.URL.String(), http.StatusFound) })

	open := fetchServer(netguard.Guard{AllowPrivate: true})
	for _, tc := range []struct {
		name, url string
		code      string // empty: success
		says      string
	}{
		{"success", ok.URL + "/car.jpg", "", ""},
		{"oversize", big.URL, carphoto.EPayloadTooLarge, "imageUrl"},
		{"slow", slow.URL, carphoto.ERequestTimeout, "imageUrl: the source did not send the image within 300ms"},
		{"404", missing.URL, carphoto.EInvalidParams, "imageUrl: the source answered 404"},
		{"unreachable", "http://127.0.0.1:1/", carphoto.EInvalidParams, "imageUrl: the source could not be reached"},
		{"redirect loop", loop.URL, carphoto.EInvalidParams, "imageUrl: the source sent more than 5 redirects"},
		{"not http", "file:///etc/passwd", carphoto.EInvalidParams, "imageUrl must be an absolute http or https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := open.fetch(context.Background(), "imageUrl", tc.url)
			if tc.code == "" {
				if err != nil || string(data) != body {
					t.Fatalf("got %d bytes, %v; want the source's %d bytes", len(data), err, len(body))
				}
				return
			}
			if got := carphoto.ErrorCode(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
			if msg := carphoto.ErrorMessage(err); !strings.Contains(msg, tc.says) {
				t.Errorf("message %q, want it to say %q", msg, tc.says)
			}
		})
	}
}

// By default a source on loopback is refused when dialled, and so is a
// redirect to one: the first hop is let through by address (a public host
// cannot be stood up in a test), the redirect's target is not, and is never
// reached.
func TestFetchGuard(t *testing.T) {
	inside, insideHits := source(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) })
	first, firstHits := source(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL+"/metadata", http.StatusFound)
	})
	for _, tc := range []struct {
		name  string
		guard netguard.Guard
		url   string
	}{
		{"loopback", netguard.Guard{}, inside.URL},
		{"localhost by name", netguard.Guard{}, strings.Replace(inside.URL, "127.0.0.1", "localhost", 1)},
		{"IPv4-mapped IPv6", netguard.Guard{}, strings.Replace(inside.URL, "127.0.0.1", "[::ffff:127.0.0.1]", 1)},
		{"redirect to loopback", netguard.Guard{Except: []string{first.Listener.Addr().String()}}, first.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fetchServer(tc.guard).fetch(context.Background(), "imageUrl", tc.url)
			if got := carphoto.ErrorCode(err); got != carphoto.EInvalidParams {
				t.Fatalf("code %q (%v), want invalid_params", got, err)
			}
			if msg := carphoto.ErrorMessage(err); !strings.Contains(msg, "imageUrl: the URL (or a redirect) leads to a loopback") {
				t.Errorf("message %q, want it to say the address is not public", msg)
			}
		})
	}
	if n := insideHits.Load(); n != 0 {
		t.Errorf("the loopback source was reached %d times, want never", n)
	}
	if n := firstHits.Load(); n != 1 {
		t.Errorf("the first hop was reached %d times, want once", n)
	}
}

// The fields are checked before imageUrl or logoUrl is fetched: a bad
// option, or both image and imageUrl, costs the source no request.
func TestCheckUploadFetchesLast(t *testing.T) {
	src, hits := source(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) })
	s := fetchServer(netguard.Guard{AllowPrivate: true})
	for _, tc := range []struct {
		name string
		op   imageops.Op
		up   upload
		code string
	}{
		{"bad style", "blur-plates", upload{values: map[string]string{"imageUrl": src.URL, "style": "sparkle"}}, carphoto.EInvalidParams},
		{"image and imageUrl", "blur-plates", upload{image: []byte("x"), hasImage: true, values: map[string]string{"imageUrl": src.URL}}, carphoto.EInvalidParams},
		{"neither", "car-cutout", upload{values: map[string]string{"crop": "true"}}, carphoto.EMissingImage},
		{"logoUrl and logoAssetId", "plate-logo", upload{values: map[string]string{"imageUrl": src.URL, "logoUrl": src.URL, "logoAssetId": "asset_x"}}, carphoto.EInvalidParams},
		{"no design", "logo-overlay", upload{values: map[string]string{"imageUrl": src.URL}}, carphoto.EInvalidParams},
		{"logoUrl not http", "logo-overlay", upload{values: map[string]string{"imageUrl": src.URL, "logoUrl": "file:///etc/passwd"}}, carphoto.EInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := s.checkUpload(context.Background(), tc.op, &tc.up)
			if got := carphoto.ErrorCode(err); got != tc.code {
				t.Errorf("code %q (%v), want %q", got, err, tc.code)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the source was fetched %d times, want never", n)
	}
}
