package server

import (
	"bytes"
	"carphoto/imageops"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"carphoto"
)

// FuzzParseUpload feeds arbitrary bodies to the upload parser: whatever a
// client sends, the answer is a request or one of the 4xx codes, never a
// panic, a hang or a 5xx.
func FuzzParseUpload(f *testing.F) {
	seed := func(parts map[string][]byte) []byte {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.SetBoundary("fuzzboundary")
		for name, data := range parts {
			if name == "image" || name == "logo" {
				w, _ := mw.CreateFormFile(name, name+".jpg")
				w.Write(data)
			} else {
				w, _ := mw.CreateFormField(name)
				w.Write(data)
			}
		}
		mw.Close()
		return b.Bytes()
	}
	png1x1 := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")
	f.Add(seed(map[string][]byte{"image": png1x1}), uint8(0))
	f.Add(seed(map[string][]byte{"image": png1x1, "style": []byte("pixelate")}), uint8(0))
	f.Add(seed(map[string][]byte{"image": png1x1, "logo": png1x1, "requirePlate": []byte("true")}), uint8(1))
	f.Add(seed(map[string][]byte{"image": png1x1, "logoAssetId": []byte("ast_x")}), uint8(1))
	f.Add(seed(map[string][]byte{"image": png1x1, "reflection": []byte("1")}), uint8(2))
	f.Add(seed(map[string][]byte{"style": []byte("blur")}), uint8(0))
	f.Add([]byte("--fuzzboundary\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\n\xff\xd8"), uint8(0))
	f.Add([]byte{}, uint8(2))

	s := &Server{cfg: Config{MaxUploadBytes: 1 << 16, MaxPixels: 1 << 20}, log: zerolog.Nop()}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body []byte, opIndex uint8) {
		op := imageops.Ops[int(opIndex)%len(imageops.Ops)]
		req := httptest.NewRequest(http.MethodPost, "/v1/"+string(op), bytes.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary=fuzzboundary")
		c := e.NewContext(req, httptest.NewRecorder())
		r, _, err := s.readUpload(c, op, time.Time{})
		if err == nil {
			if len(r.Photo) == 0 {
				t.Fatalf("accepted a request without a photo")
			}
			return
		}
		var ce *carphoto.Error
		if !errors.As(err, &ce) {
			t.Fatalf("error without a code: %v", err)
		}
		switch ce.Code {
		case carphoto.EMissingImage, carphoto.EInvalidParams, carphoto.EPayloadTooLarge:
		default:
			t.Fatalf("code %q for a client's body: %v", ce.Code, err)
		}
		if ce.Message == "" {
			t.Fatalf("empty message for %v", err)
		}
	})
}
