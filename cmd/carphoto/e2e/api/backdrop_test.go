package api

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"carphoto/internal/testenv/e2etest"
)

// sample is the file name of docs/samples, the README's sample files.
func sample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(e2etest.RepoPath("docs", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// samplePhoto is docs/samples/car.jpg, the README's whole-car photo.
func samplePhoto(t *testing.T) []byte { return sample(t, "car.jpg") }

// wallPNG is a w×h backdrop of one grey.
func wallPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = 200, 200, 200, 255
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Through the whole service: the answer is the backdrop at its own size,
// the car standing on its floor at the width asked for, charged once; a
// backdrop saved in the library and one named by URL work the same.
func TestBackdrop(t *testing.T) {
	s := e2etest.StartService(t, map[string]string{"ALLOW_PRIVATE_URLS": "true"})
	id, key := s.Account(t, 10)
	// Small enough that the sample car (about 360 px wide) is not enlarged
	// past 1.5× at the default scale: the answer is the backdrop's size.
	const W, H = 600, 380
	wall := wallPNG(t, W, H)

	// car-cutout: nothing but the car differs from the wall, so its
	// bounds are what the placement asked for.
	status, h, body := e2etest.Post(t, s.URL+"/v1/car-cutout", key, e2etest.File("image", samplePhoto(t)), e2etest.File("backgroundImage", wall),
		e2etest.Field("floorY", "0.8"), e2etest.Field("scale", "0.6"), e2etest.Field("centerX", "0.45"))
	if status != http.StatusOK || h.Get("Content-Type") != "image/png" || h.Get("X-Credits-Charged") != "1" {
		t.Fatalf("car-cutout on a backdrop: %d %s charged %q %.200s", status, h.Get("Content-Type"), h.Get("X-Credits-Charged"), body)
	}
	out, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if b := out.Bounds(); b.Dx() != W || b.Dy() != H {
		t.Fatalf("answer %v, want the backdrop's %d×%d", b, W, H)
	}
	car := changed(out, color.RGBA{200, 200, 200, 255}, 24)
	if floor := int(0.8 * H); car.Max.Y < floor-3 || car.Max.Y > floor+2 {
		t.Errorf("the car's lowest row ends at y=%d, want the floor line %d (floorY=0.8)", car.Max.Y, floor)
	}
	if want := 0.6 * W; math.Abs(float64(car.Dx())-want) > 0.04*want {
		t.Errorf("the car is %d px wide, want about %.0f (scale=0.6)", car.Dx(), want)
	}
	if mid := float64(car.Min.X+car.Max.X) / 2; math.Abs(mid-0.45*W) > 0.03*W {
		t.Errorf("the car is centred at x=%.0f, want about %.0f (centerX=0.45)", mid, 0.45*W)
	}

	// car-shadow with a saved backdrop, answered as JPEG: the floor under
	// the car is shadowed.
	status, _, body = e2etest.Post(t, s.URL+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "studio.png", Data: wall}, e2etest.Field("kind", "backdrop"))
	var asset struct{ ID, Kind string }
	if status != http.StatusCreated || json.Unmarshal(body, &asset) != nil || asset.Kind != "backdrop" {
		t.Fatalf("save a backdrop: %d %s", status, body)
	}
	status, h, body = e2etest.Post(t, s.URL+"/v1/car-shadow", key, e2etest.File("image", samplePhoto(t)), e2etest.Field("backgroundAssetId", asset.ID), e2etest.Field("format", "jpeg"))
	if status != http.StatusOK || h.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("car-shadow on a saved backdrop: %d %s %.200s", status, h.Get("Content-Type"), body)
	}
	out, _, err = image.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if b := out.Bounds(); b.Dx() != W || b.Dy() != H {
		t.Fatalf("answer %v, want the backdrop's %d×%d", b, W, H)
	}
	floor := int(0.85 * H) // the default floorY
	shadowed := 0
	for x := 0; x < W; x++ {
		if r, _, _, _ := out.At(x, floor+2).RGBA(); r>>8 < 150 {
			shadowed++
		}
	}
	if shadowed < W/10 {
		t.Errorf("%d columns shadowed just below the floor line, want the car's contact shadow (at least %d)", shadowed, W/10)
	}

	// By URL, fetched through the guard (let through to loopback here).
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(wall) }))
	t.Cleanup(src.Close)
	status, _, body = e2etest.Post(t, s.URL+"/v1/car-shadow", key, e2etest.File("image", samplePhoto(t)), e2etest.Field("backgroundUrl", src.URL+"/studio.png"), e2etest.Field("reflection", "true"))
	if status != http.StatusOK {
		t.Fatalf("car-shadow on a backdrop by URL: %d %.200s", status, body)
	}
	if got := s.Credits(t, id); got != 7 {
		t.Errorf("credits after three calls: %d, want 7", got)
	}
}

// changed is the box of img's pixels that differ from bg by more than tol
// in any channel.
func changed(img image.Image, bg color.RGBA, tol int) image.Rectangle {
	var r image.Rectangle
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if absDiff(c.R, bg.R) > tol || absDiff(c.G, bg.G) > tol || absDiff(c.B, bg.B) > tol {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return r
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// scrambled is a copy of a PNG with bytes in the middle of its pixel data
// changed: its header and sizes hold, its decoding fails (in the worker,
// after the credits are held).
func scrambled(b []byte) []byte {
	out := bytes.Clone(b)
	for i := len(out) / 2; i < len(out)/2+64; i++ {
		out[i] ^= 0x5a
	}
	return out
}

// Every refusal of a backdrop call is a 4xx saying what to fix, and none
// is charged; car_not_found still applies.
func TestBackdropRefusals(t *testing.T) {
	s := e2etest.StartService(t, map[string]string{"ALLOW_PRIVATE_URLS": "true", "MAX_BACKDROP_PIXELS": "400000"})
	id, key := s.Account(t, 5)
	wall := wallPNG(t, 800, 500)
	photo := samplePhoto(t)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/studio.png" {
			http.NotFound(w, r)
			return
		}
		w.Write(wall)
	}))
	t.Cleanup(src.Close)

	status, _, body := e2etest.Post(t, s.URL+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "dealer.png", Data: e2etest.TwoColourLogo(t)})
	var design struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(body, &design) != nil {
		t.Fatalf("save a design: %d %s", status, body)
	}
	status, _, body = e2etest.Post(t, s.URL+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "studio.png", Data: wall}, e2etest.Field("kind", "backdrop"))
	var backdrop struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(body, &backdrop) != nil {
		t.Fatalf("save a backdrop: %d %s", status, body)
	}

	for _, tc := range []struct {
		name   string
		path   string
		parts  []e2etest.Part
		status int
		code   string
		says   string
	}{
		{"two backdrops", "/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", wall), e2etest.Field("backgroundUrl", src.URL+"/studio.png")},
			400, "invalid_params", "send at most one backdrop"},
		{"crop with a backdrop", "/v1/car-cutout", []e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", wall), e2etest.Field("crop", "true")},
			400, "invalid_params", "crop does not apply with a backdrop"},
		{"background with a backdrop", "/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("backgroundAssetId", backdrop.ID), e2etest.Field("background", "#FFFFFF"), e2etest.Field("aspect", "4:3")},
			400, "invalid_params", "aspect, background do not apply with a backdrop"},
		{"floorY out of range", "/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", wall), e2etest.Field("floorY", "1.5")},
			400, "invalid_params", "floorY must be a number from 0.1 to 1"},
		{"a design as backdrop", "/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("backgroundAssetId", design.ID)},
			400, "invalid_params", "is a design asset, not a backdrop"},
		{"a backdrop as design", "/v1/logo-overlay", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("logoAssetId", backdrop.ID)},
			400, "invalid_params", "is a backdrop asset, not a design"},
		{"oversize backdrop", "/v1/car-cutout", []e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", wallPNG(t, 1000, 500))},
			400, "invalid_params", "backgroundImage: the backdrop is 1000×500 pixels (0.5 MP); a backdrop may have at most 0.4 MP"},
		{"backgroundUrl 404", "/v1/car-cutout", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("backgroundUrl", src.URL+"/gone.png")},
			400, "invalid_params", "backgroundUrl: the source answered 404"},
		{"damaged backdrop", "/v1/car-cutout", []e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", wall[:len(wall)*3/4])},
			400, "invalid_params", "backgroundImage: "},
		{"backdrop damaged inside", "/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", scrambled(wall))},
			400, "invalid_params", "backdrop: "},
		{"no car on the backdrop", "/v1/car-shadow", []e2etest.Part{e2etest.File("image", e2etest.PlainJPEG(t)), e2etest.File("backgroundImage", wall)},
			422, "car_not_found", "no car was found in the photo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := e2etest.Post(t, s.URL+tc.path, key, tc.parts...)
			e2etest.WantError(t, status, h, body, tc.status, tc.code)
			if msg := errorText(t, body); !strings.Contains(msg, tc.says) {
				t.Errorf("error %q, want it to say %q", msg, tc.says)
			}
			if got := s.Credits(t, id); got != 5 {
				t.Errorf("credits after the failure: %d, want 5 (uncharged)", got)
			}
		})
	}

	// An oversize backdrop cannot be saved either.
	status, h, body := e2etest.Post(t, s.URL+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "big.png", Data: wallPNG(t, 1000, 500)}, e2etest.Field("kind", "backdrop"))
	e2etest.WantError(t, status, h, body, 400, "invalid_params")
	status, h, body = e2etest.Post(t, s.URL+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "x.png", Data: wall}, e2etest.Field("kind", "wallpaper"))
	e2etest.WantError(t, status, h, body, 400, "invalid_params")
}
