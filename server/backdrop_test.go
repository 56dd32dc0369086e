package server

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"carphoto"
	"carphoto/internal/netguard"
	"carphoto/jobs"
)

// pngBytes is a w×h transparent PNG.
func pngBytes(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// backdropServer checks uploads of up to 64 KiB, backdrops of up to
// 200×100 pixels, fetching through guard.
func backdropServer(guard netguard.Guard) *Server {
	return &Server{
		cfg:     Config{MaxUploadBytes: 1 << 16, MaxPixels: 1 << 20, MaxBackdropPixels: 200 * 100, UploadTimeout: time.Second},
		fetcher: newFetchClient(guard),
	}
}

// A backdrop reaches the worker as the request's second image with the
// placement filled in; every way to ask for one wrongly is 400
// invalid_params naming what to fix, before any fetch.
func TestBackdropParams(t *testing.T) {
	photo, backdrop := pngBytes(t, 8, 8), pngBytes(t, 200, 100)
	src, hits := source(t, func(w http.ResponseWriter, r *http.Request) { w.Write(backdrop) })
	s := backdropServer(netguard.Guard{AllowPrivate: true})

	withFile := func(values map[string]string) upload {
		return upload{image: photo, hasImage: true, backdrop: backdrop, hasBackdrop: true, values: values}
	}
	for _, tc := range []struct {
		name string
		op   string
		up   upload
		want jobs.Params // when says is empty
		says string
	}{
		{"defaults", jobs.OpCarShadow, withFile(map[string]string{}),
			jobs.Params{Backdrop: true, FloorY: 0.85, Scale: 0.8, CenterX: 0.5}, ""},
		{"placement", jobs.OpCarCutout, withFile(map[string]string{"floorY": "0.9", "scale": "0.5", "centerX": "0", "format": "jpeg"}),
			jobs.Params{Backdrop: true, FloorY: 0.9, Scale: 0.5, CenterX: 0, Format: "jpeg"}, ""},
		{"reflection", jobs.OpCarShadow, withFile(map[string]string{"reflection": "true", "floorY": "1"}),
			jobs.Params{Backdrop: true, Reflection: true, FloorY: 1, Scale: 0.8, CenterX: 0.5}, ""},
		{"no backdrop", jobs.OpCarShadow, upload{image: photo, hasImage: true, values: map[string]string{}}, jobs.Params{}, ""},

		{"file and URL", jobs.OpCarShadow, withFile(map[string]string{"backgroundUrl": src.URL}), jobs.Params{},
			"send at most one backdrop: backgroundImage (a file), backgroundUrl or backgroundAssetId"},
		{"URL and asset", jobs.OpCarCutout, upload{image: photo, hasImage: true, values: map[string]string{"backgroundUrl": src.URL, "backgroundAssetId": "asset_x"}}, jobs.Params{},
			"send at most one backdrop"},
		{"crop", jobs.OpCarShadow, withFile(map[string]string{"crop": "true"}), jobs.Params{},
			"crop does not apply with a backdrop"},
		{"padding and aspect", jobs.OpCarCutout, withFile(map[string]string{"padding": "5%", "aspect": "4:3"}), jobs.Params{},
			"padding, aspect do not apply with a backdrop"},
		{"background", jobs.OpCarCutout, withFile(map[string]string{"background": "#FFFFFF"}), jobs.Params{},
			"background does not apply with a backdrop"},
		{"floorY above 1", jobs.OpCarShadow, withFile(map[string]string{"floorY": "1.2"}), jobs.Params{},
			`floorY must be a number from 0.1 to 1, not "1.2"`},
		{"scale 0", jobs.OpCarShadow, withFile(map[string]string{"scale": "0"}), jobs.Params{},
			`scale must be a number from 0.05 to 1, not "0"`},
		{"centerX not a number", jobs.OpCarShadow, withFile(map[string]string{"centerX": "middle"}), jobs.Params{},
			`centerX must be a number from 0 to 1, not "middle"`},
		{"placement without a backdrop", jobs.OpCarShadow, upload{image: photo, hasImage: true, values: map[string]string{"floorY": "0.8"}}, jobs.Params{},
			"floorY place the car on a backdrop: send one in backgroundImage"},
		{"empty asset id", jobs.OpCarShadow, upload{image: photo, hasImage: true, values: map[string]string{"backgroundAssetId": ""}}, jobs.Params{},
			"backgroundAssetId is empty"},
		{"URL not http", jobs.OpCarShadow, upload{image: photo, hasImage: true, values: map[string]string{"backgroundUrl": "file:///etc/passwd"}}, jobs.Params{},
			"backgroundUrl must be an absolute http or https URL"},
		{"oversize backdrop", jobs.OpCarShadow, upload{image: photo, hasImage: true, backdrop: pngBytes(t, 201, 100), hasBackdrop: true, values: map[string]string{}}, jobs.Params{},
			"backgroundImage: the backdrop is 201×100 pixels (0.0 MP); a backdrop may have at most 0.0 MP"},
		{"backdrop not an image", jobs.OpCarCutout, upload{image: photo, hasImage: true, backdrop: []byte("<html>"), hasBackdrop: true, values: map[string]string{}}, jobs.Params{},
			"backgroundImage: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, assetID, err := s.checkUpload(context.Background(), tc.op, &tc.up)
			if tc.says != "" {
				if carphoto.ErrorCode(err) != carphoto.EInvalidParams || !strings.Contains(carphoto.ErrorMessage(err), tc.says) {
					t.Fatalf("error %v, want invalid_params saying %q", err, tc.says)
				}
				return
			}
			if err != nil || req.Params != tc.want || assetID != "" {
				t.Fatalf("params %+v, asset %q, %v; want %+v", req.Params, assetID, err, tc.want)
			}
			if tc.want.Backdrop != bytes.Equal(req.Logo, backdrop) {
				t.Errorf("second image %d bytes, want the backdrop's %d: %v", len(req.Logo), len(backdrop), tc.want.Backdrop)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the backdrop source was fetched %d times by refused requests, want never", n)
	}

	// By URL: fetched once, after the fields; by asset id: left to the
	// handler, which reads the library.
	req, _, err := s.checkUpload(context.Background(), jobs.OpCarShadow,
		&upload{image: photo, hasImage: true, values: map[string]string{"backgroundUrl": src.URL + "/studio.png"}})
	if err != nil || !bytes.Equal(req.Logo, backdrop) || hits.Load() != 1 {
		t.Fatalf("backgroundUrl: %v, %d bytes, %d fetches; want the backdrop, fetched once", err, len(req.Logo), hits.Load())
	}
	req, assetID, err := s.checkUpload(context.Background(), jobs.OpCarCutout,
		&upload{image: photo, hasImage: true, values: map[string]string{"backgroundAssetId": "asset_abc"}})
	if err != nil || assetID != "asset_abc" || req.Logo != nil || !req.Params.Backdrop {
		t.Fatalf("backgroundAssetId: asset %q, %v, params %+v; want asset_abc for the handler", assetID, err, req.Params)
	}
}

// backgroundUrl goes through the same address guard as imageUrl: a
// backdrop on loopback is refused, and never reached, by default.
func TestBackdropURLGuard(t *testing.T) {
	inside, insideHits := source(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) })
	s := backdropServer(netguard.Guard{})
	_, _, err := s.checkUpload(context.Background(), jobs.OpCarShadow, &upload{
		image: pngBytes(t, 8, 8), hasImage: true, values: map[string]string{"backgroundUrl": inside.URL + "/studio.jpg"},
	})
	if carphoto.ErrorCode(err) != carphoto.EInvalidParams || !strings.Contains(carphoto.ErrorMessage(err), "backgroundUrl: the URL (or a redirect) leads to a loopback") {
		t.Fatalf("error %v, want invalid_params naming backgroundUrl and the loopback address", err)
	}
	if n := insideHits.Load(); n != 0 {
		t.Errorf("the loopback source was reached %d times, want never", n)
	}
}
