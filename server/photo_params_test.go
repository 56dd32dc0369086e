package server

import (
	"bytes"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"carphoto"
	"carphoto/jobs"
)

// The fields a client sends reach the worker as Params, and only the exact
// spellings do.
func TestParseUploadParams(t *testing.T) {
	var png1x1 bytes.Buffer
	if err := png.Encode(&png1x1, image.NewNRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	s := &Server{cfg: Config{MaxUploadBytes: 1 << 16, MaxPixels: 1 << 20}, log: zerolog.Nop()}
	e := echo.New()
	for _, tc := range []struct {
		op     string
		fields map[string]string
		want   jobs.Params // ignored when code is set
		code   string
	}{
		{jobs.OpCarShadow, map[string]string{"reflection": "true", "format": "webp"}, jobs.Params{Reflection: true, Format: "webp"}, ""},
		{jobs.OpCarShadow, map[string]string{"reflection": "false"}, jobs.Params{}, ""},
		{jobs.OpBlurPlates, map[string]string{"requirePlate": "true", "format": "png"}, jobs.Params{Style: "blur", RequirePlate: true, Format: "png"}, ""},
		{jobs.OpBlurPlates, map[string]string{"format": "jpeg"}, jobs.Params{Style: "blur", Format: "jpeg"}, ""},
		{jobs.OpBlurPlates, map[string]string{"requirePlate": "1"}, jobs.Params{}, carphoto.EInvalidParams},
		{jobs.OpBlurPlates, map[string]string{"requirePlate": "True"}, jobs.Params{}, carphoto.EInvalidParams},
		{jobs.OpCarShadow, map[string]string{"reflection": "yes"}, jobs.Params{}, carphoto.EInvalidParams},
		{jobs.OpCarShadow, map[string]string{"format": "tiff"}, jobs.Params{}, carphoto.EInvalidParams},
		{jobs.OpBlurPlates, map[string]string{"format": "PNG"}, jobs.Params{}, carphoto.EInvalidParams},
		// The canvas's worst case around this 4×4 photo against the 1 MP
		// cap: 1004×1004 passes, 1204×1204 and a 100:1 canvas do not.
		{jobs.OpCarCutout, map[string]string{"crop": "true", "padding": "500"}, jobs.Params{Crop: true, Padding: 500}, ""},
		{jobs.OpCarCutout, map[string]string{"crop": "true", "padding": "600"}, jobs.Params{}, carphoto.EInvalidParams},
		{jobs.OpCarShadow, map[string]string{"crop": "true", "padding": "10000", "aspect": "100:1"}, jobs.Params{}, carphoto.EInvalidParams},
		{jobs.OpCarShadow, map[string]string{"crop": "true", "padding": "100%", "aspect": "100:1"}, jobs.Params{Crop: true, Padding: 1, PaddingShare: true, Aspect: [2]int{100, 1}}, ""},
	} {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		w, _ := mw.CreateFormFile("image", "car.png")
		w.Write(png1x1.Bytes())
		for k, v := range tc.fields {
			mw.WriteField(k, v)
		}
		mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/v1/"+tc.op, &b)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		r, _, err := s.parseUpload(e.NewContext(req, httptest.NewRecorder()), tc.op)
		if tc.code != "" {
			if got := carphoto.ErrorCode(err); err == nil || got != tc.code {
				t.Errorf("%s %v: error %v, want %s", tc.op, tc.fields, err, tc.code)
			}
			continue
		}
		if err != nil || r.Params != tc.want {
			t.Errorf("%s %v: params %+v, %v; want %+v", tc.op, tc.fields, r.Params, err, tc.want)
		}
	}
}
