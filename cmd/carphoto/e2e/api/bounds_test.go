package api

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"net/http"
	"strings"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/imgtest"
)

// iccProfile is an RGB display profile header (what the codec checks of
// a profile's colour space) padded with zeros to n bytes: zlib packs a
// 16 MB one into about 16 KB.
func iccProfile(n int) []byte {
	p := make([]byte, n)
	binary.BigEndian.PutUint32(p, uint32(n))
	copy(p[12:], "mntrRGB XYZ ")
	copy(p[36:], "acsp")
	return p
}

// withICCP is the PNG data with an iCCP chunk carrying icc, compressed,
// right after IHDR.
func withICCP(t *testing.T, data, icc []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(icc)
	zw.Close()
	body := append([]byte("iCCPprofile\x00\x00"), z.Bytes()...)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(body)-4))
	chunk = append(chunk, body...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(body))
	const afterIHDR = 8 + 25
	return append(append(append([]byte{}, data[:afterIHDR]...), chunk...), data[afterIHDR:]...)
}

// samplePNG is the sample car photo as a PNG.
func samplePNG(t *testing.T) []byte {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(e2etest.CarPhoto(t)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Answers in proportion: a PNG carrying a 16 MB colour profile packed into
// 16 KB is answered at most twice a plain encode of its pixels plus 64 KB,
// the profile dropped and the answer saying so; a profile of ordinary size
// is kept, unsaid.
func TestColourProfileInProportion(t *testing.T) {
	s := e2etest.StartService(t, nil)
	_, key := s.Account(t, 10)
	plainPNG := samplePNG(t)
	huge := withICCP(t, plainPNG, iccProfile(16_000_000))
	t.Logf("photo %d KB, with the 16 MB profile %d KB", len(plainPNG)>>10, len(huge)>>10)

	call := func(photo []byte) (http.Header, []byte) {
		t.Helper()
		status, h, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", photo), e2etest.Field("format", "jpeg"))
		if status != http.StatusOK {
			t.Fatalf("blur-plates: %d %.300s", status, body)
		}
		return h, body
	}
	_, plain := call(plainPNG)
	h, body := call(huge)
	if bound := 2*len(plain) + 64<<10; len(body) > bound {
		t.Errorf("answer %d bytes, over 2 × the plain answer (%d) + 64 KB = %d", len(body), len(plain), bound)
	}
	if got := h.Get("X-Color-Profile"); got != "dropped" {
		t.Errorf("X-Color-Profile %q, want dropped", got)
	}
	if bytes.Contains(body, []byte("ICC_PROFILE")) {
		t.Error("the answer carries the 16 MB profile")
	}

	h, body = call(withICCP(t, plainPNG, iccProfile(3<<10)))
	if !bytes.Contains(body, []byte("ICC_PROFILE")) || h.Get("X-Color-Profile") != "" {
		t.Errorf("a 3 KB profile: kept %v, X-Color-Profile %q; want kept, unsaid", bytes.Contains(body, []byte("ICC_PROFILE")), h.Get("X-Color-Profile"))
	}
}

// A photo whose real profile (Display P3, 1.2 MB) is too large for its
// answer is answered in sRGB: its colours converted from the profile, so
// that it looks as the photo did, and X-Color-Profile: converted.
func TestColourProfileConvertedToSRGB(t *testing.T) {
	s := e2etest.StartService(t, nil)
	_, key := s.Account(t, 1)
	c := color.NRGBA{200, 100, 50, 255}
	img := image.NewNRGBA(image.Rect(0, 0, 320, 240))
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:], []byte{c.R, c.G, c.B, c.A})
	}
	var plain bytes.Buffer
	if err := png.Encode(&plain, img); err != nil {
		t.Fatal(err)
	}
	profile := imgtest.DisplayP3Profile(600_000)
	status, h, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", withICCP(t, plain.Bytes(), profile)), e2etest.Field("format", "png"))
	if status != http.StatusOK {
		t.Fatalf("blur-plates: %d %.300s", status, body)
	}
	if got := h.Get("X-Color-Profile"); got != "converted" {
		t.Errorf("X-Color-Profile %q, want converted (a %d-byte Display P3 profile)", got, len(profile))
	}
	out, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got := color.NRGBAModel.Convert(out.At(160, 120)).(color.NRGBA)
	want := imgtest.P3ToSRGB(c)
	for k, v := range [3]uint8{got.R, got.G, got.B} {
		if math.Abs(float64(v)-want[k]) > 2 {
			t.Fatalf("P3 %v answered as %v, want about sRGB %.1f", c, got, want)
		}
	}
}

// A field name of 9 MB is echoed cut to 64 characters: the answer stays a
// few hundred bytes.
func TestLongFieldNameEchoedCut(t *testing.T) {
	s := e2etest.StartService(t, nil)
	_, key := s.Account(t, 1)
	name := strings.Repeat("n", 9<<20)
	status, h, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", e2etest.PlainJPEG(t)), e2etest.Field(name, "x"))
	e2etest.WantError(t, status, h, body, http.StatusBadRequest, "invalid_params")
	if len(body) > 1024 {
		t.Errorf("answer %d bytes, want at most 1 KB: %.200s", len(body), body)
	}
	if !strings.Contains(string(body), `\"`+strings.Repeat("n", 64)+`\"…`) {
		t.Errorf("answer %.300s does not quote the name cut to 64 characters", body)
	}
}

// Bad data is named: a file cut short is "truncated", a whole file whose
// data does not decode (a lossy WebP's partition overwritten, a PNG's
// compressed stream damaged) "corrupt"; each 400, uncharged.
func TestBadDataNamed(t *testing.T) {
	s := e2etest.StartService(t, nil)
	id, key := s.Account(t, 5)
	photo := e2etest.CarPhoto(t)
	img, err := jpeg.Decode(bytes.NewReader(photo))
	if err != nil {
		t.Fatal(err)
	}
	var webpData bytes.Buffer
	if err := codec.EncodeWebP(&webpData, img, 80); err != nil {
		t.Fatal(err)
	}
	flipped := func(data []byte) []byte {
		d := bytes.Clone(data)
		for i := len(d) / 2; i < len(d)/2+64; i++ {
			d[i] ^= 0x5a
		}
		return d
	}
	pngData := samplePNG(t)
	for _, tc := range []struct {
		name  string
		data  []byte
		want  string
		wrong string
	}{
		{"JPEG cut in half", photo[:len(photo)/2], "truncated", "corrupt"},
		{"lossy WebP with 64 bytes overwritten", flipped(webpData.Bytes()), "corrupt", "truncated"},
		{"PNG with 64 bytes of IDAT overwritten", flipped(pngData), "corrupt", "truncated"},
		{"WebP cut short", webpData.Bytes()[:webpData.Len()*2/3], "truncated", "corrupt"},
	} {
		status, h, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", tc.data))
		e2etest.WantError(t, status, h, body, http.StatusBadRequest, "invalid_params")
		if msg := string(body); !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.wrong) {
			t.Errorf("%s: %s; want it named %q only", tc.name, body, tc.want)
		}
	}
	if got := s.Credits(t, id); got != 5 {
		t.Errorf("balance %d, want 5: bad data is never charged", got)
	}
}
