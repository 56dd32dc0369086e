package server

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"carphoto"
	"carphoto/imageops"
	"carphoto/imageops/shadow"
	"carphoto/internal/netguard"
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
		op   imageops.Op
		up   upload
		want imageops.Params // when says is empty
		says string
	}{
		{"defaults", imageops.CarShadow, withFile(map[string]string{}),
			imageops.Params{Op: imageops.CarShadow, Backdrop: &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}}, ""},
		{"placement", imageops.CarCutout, withFile(map[string]string{"floorY": "0.9", "scale": "0.5", "centerX": "0", "format": "jpeg"}),
			imageops.Params{Op: imageops.CarCutout, Backdrop: &shadow.Placement{FloorY: 0.9, Scale: 0.5, CenterX: 0}, Format: "jpeg"}, ""},
		{"reflection", imageops.CarShadow, withFile(map[string]string{"reflection": "true", "floorY": "1"}),
			imageops.Params{Op: imageops.CarShadow, Backdrop: &shadow.Placement{FloorY: 1, Scale: 0.8, CenterX: 0.5}, Reflection: true}, ""},
		{"no backdrop", imageops.CarShadow, upload{image: photo, hasImage: true, values: map[string]string{}}, imageops.Params{Op: imageops.CarShadow}, ""},

		{"file and URL", imageops.CarShadow, withFile(map[string]string{"backgroundUrl": src.URL}), imageops.Params{},
			"send at most one backdrop: backgroundImage (a file), backgroundUrl or backgroundAssetId"},
		{"URL and asset", imageops.CarCutout, upload{image: photo, hasImage: true, values: map[string]string{"backgroundUrl": src.URL, "backgroundAssetId": "asset_x"}}, imageops.Params{},
			"send at most one backdrop"},
		{"crop", imageops.CarShadow, withFile(map[string]string{"crop": "true"}), imageops.Params{},
			"crop does not apply with a backdrop"},
		{"padding and aspect", imageops.CarCutout, withFile(map[string]string{"padding": "5%", "aspect": "4:3"}), imageops.Params{},
			"padding, aspect do not apply with a backdrop"},
		{"background", imageops.CarCutout, withFile(map[string]string{"background": "#FFFFFF"}), imageops.Params{},
			"background does not apply with a backdrop"},
		{"floorY above 1", imageops.CarShadow, withFile(map[string]string{"floorY": "1.2"}), imageops.Params{},
			`floorY must be a number from 0.1 to 1, not "1.2"`},
		{"scale 0", imageops.CarShadow, withFile(map[string]string{"scale": "0"}), imageops.Params{},
			`scale must be a number from 0.05 to 1, not "0"`},
		{"centerX not a number", imageops.CarShadow, withFile(map[string]string{"centerX": "middle"}), imageops.Params{},
			`centerX must be a number from 0 to 1, not "middle"`},
		{"placement without a backdrop", imageops.CarShadow, upload{image: photo, hasImage: true, values: map[string]string{"floorY": "0.8"}}, imageops.Params{},
			"floorY places the car on a backdrop: send one in backgroundImage"},
		{"empty asset id", imageops.CarShadow, upload{image: photo, hasImage: true, values: map[string]string{"backgroundAssetId": ""}}, imageops.Params{},
			"backgroundAssetId is empty"},
		{"URL not http", imageops.CarShadow, upload{image: photo, hasImage: true, values: map[string]string{"backgroundUrl": "file:///etc/passwd"}}, imageops.Params{},
			"backgroundUrl must be an absolute http or https URL"},
		{"oversize backdrop", imageops.CarShadow, upload{image: photo, hasImage: true, backdrop: pngBytes(t, 201, 100), hasBackdrop: true, values: map[string]string{}}, imageops.Params{},
			"backgroundImage: the backdrop is 201×100 pixels (0.0 MP); a backdrop may have at most 0.0 MP"},
		{"backdrop not an image", imageops.CarCutout, upload{image: photo, hasImage: true, backdrop: []byte("<html>"), hasBackdrop: true, values: map[string]string{}}, imageops.Params{},
			"backgroundImage: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, ids, err := s.checkUpload(context.Background(), tc.op, &tc.up)
			if tc.says != "" {
				if carphoto.ErrorCode(err) != carphoto.EInvalidParams || !strings.Contains(carphoto.ErrorMessage(err), tc.says) {
					t.Fatalf("error %v, want invalid_params saying %q", err, tc.says)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(req.Params, tc.want) || ids != (assetIDs{}) {
				t.Fatalf("params %+v, assets %+v, %v; want %+v", req.Params, ids, err, tc.want)
			}
			if (tc.want.Backdrop != nil) != bytes.Equal(req.Backdrop, backdrop) || req.Design != nil {
				t.Errorf("backdrop %d bytes, design %d, want the backdrop's %d: %v", len(req.Backdrop), len(req.Design), len(backdrop), tc.want.Backdrop)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the backdrop source was fetched %d times by refused requests, want never", n)
	}

	// By URL: fetched once, after the fields; by asset id: left to the
	// handler, which reads the library.
	req, _, err := s.checkUpload(context.Background(), imageops.CarShadow,
		&upload{image: photo, hasImage: true, values: map[string]string{"backgroundUrl": src.URL + "/studio.png"}})
	if err != nil || !bytes.Equal(req.Backdrop, backdrop) || hits.Load() != 1 {
		t.Fatalf("backgroundUrl: %v, %d bytes, %d fetches; want the backdrop, fetched once", err, len(req.Backdrop), hits.Load())
	}
	req, ids, err := s.checkUpload(context.Background(), imageops.CarCutout,
		&upload{image: photo, hasImage: true, values: map[string]string{"backgroundAssetId": "asset_abc"}})
	if err != nil || ids != (assetIDs{backdrop: "asset_abc"}) || req.Backdrop != nil || req.Params.Backdrop == nil {
		t.Fatalf("backgroundAssetId: assets %+v, %v, params %+v; want asset_abc for the handler", ids, err, req.Params)
	}
}

// backgroundUrl goes through the same address guard as imageUrl: a
// backdrop on loopback is refused, and never reached, by default.
func TestBackdropURLGuard(t *testing.T) {
	inside, insideHits := source(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) })
	s := backdropServer(netguard.Guard{})
	_, _, err := s.checkUpload(context.Background(), imageops.CarShadow, &upload{
		image: pngBytes(t, 8, 8), hasImage: true, values: map[string]string{"backgroundUrl": inside.URL + "/studio.jpg"},
	})
	if carphoto.ErrorCode(err) != carphoto.EInvalidParams || !strings.Contains(carphoto.ErrorMessage(err), "backgroundUrl: the URL (or a redirect) leads to a loopback") {
		t.Fatalf("error %v, want invalid_params naming backgroundUrl and the loopback address", err)
	}
	if n := insideHits.Load(); n != 0 {
		t.Errorf("the loopback source was reached %d times, want never", n)
	}
}
