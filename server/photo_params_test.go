package server

import (
	"bytes"
	"carphoto/imageops"
	"carphoto/imageops/shadow"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"carphoto"
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
		op     imageops.Op
		fields map[string]string
		want   imageops.Params // ignored when code is set
		code   string
	}{
		{imageops.CarShadow, map[string]string{"reflection": "true", "format": "webp"}, imageops.Params{Op: imageops.CarShadow, Reflection: true, Format: "webp"}, ""},
		{imageops.CarShadow, map[string]string{"reflection": "false"}, imageops.Params{Op: imageops.CarShadow}, ""},
		{imageops.BlurPlates, map[string]string{"requirePlate": "true", "format": "png"}, imageops.Params{Op: imageops.BlurPlates, Style: imageops.StyleBlur, RequirePlate: true, Format: "png"}, ""},
		{imageops.BlurPlates, map[string]string{"format": "jpeg"}, imageops.Params{Op: imageops.BlurPlates, Style: imageops.StyleBlur, Format: "jpeg"}, ""},
		{imageops.BlurPlates, map[string]string{"requirePlate": "1"}, imageops.Params{Op: imageops.BlurPlates}, carphoto.EInvalidParams},
		{imageops.BlurPlates, map[string]string{"requirePlate": "True"}, imageops.Params{Op: imageops.BlurPlates}, carphoto.EInvalidParams},
		{imageops.CarShadow, map[string]string{"reflection": "yes"}, imageops.Params{Op: imageops.CarShadow}, carphoto.EInvalidParams},
		{imageops.CarShadow, map[string]string{"format": "tiff"}, imageops.Params{Op: imageops.CarShadow}, carphoto.EInvalidParams},
		{imageops.BlurPlates, map[string]string{"format": "PNG"}, imageops.Params{Op: imageops.BlurPlates}, carphoto.EInvalidParams},
		// The canvas's worst case around this 4×4 photo against the 1 MP
		// cap: 1004×1004 passes, 1204×1204 and a 100:1 canvas do not.
		{imageops.CarCutout, map[string]string{"crop": "true", "padding": "500"}, imageops.Params{Op: imageops.CarCutout, Canvas: shadow.Canvas{Crop: true, Padding: 500}}, ""},
		{imageops.CarCutout, map[string]string{"crop": "true", "padding": "600"}, imageops.Params{Op: imageops.CarCutout}, carphoto.EInvalidParams},
		{imageops.CarShadow, map[string]string{"crop": "true", "padding": "10000", "aspect": "100:1"}, imageops.Params{Op: imageops.CarShadow}, carphoto.EInvalidParams},
		{imageops.CarShadow, map[string]string{"crop": "true", "padding": "100%", "aspect": "100:1"}, imageops.Params{Op: imageops.CarShadow, Canvas: shadow.Canvas{Crop: true, Padding: 1, PaddingShare: true, Aspect: [2]int{100, 1}}}, ""},
	} {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		w, _ := mw.CreateFormFile("image", "car.png")
		w.Write(png1x1.Bytes())
		for k, v := range tc.fields {
			mw.WriteField(k, v)
		}
		mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/v1/"+string(tc.op), &b)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		r, _, err := s.readUpload(e.NewContext(req, httptest.NewRecorder()), tc.op, time.Time{})
		if tc.code != "" {
			if got := carphoto.ErrorCode(err); err == nil || got != tc.code {
				t.Errorf("%s %v: error %v, want %s", tc.op, tc.fields, err, tc.code)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(r.Params, tc.want) {
			t.Errorf("%s %v: params %+v, %v; want %+v", tc.op, tc.fields, r.Params, err, tc.want)
		}
	}
}
