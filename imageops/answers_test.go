//go:build answers

package imageops

// The answers check: every operation, in every path and option that picks
// a different code path, on 12 real photos, each answer's bytes recorded as
// a SHA-256 in testdata/answers.json. A move or a refactor that must not
// change what a customer gets runs it before (with -update, on the old
// code) and after; a change of the vision or the rendering shows here as
// the list of answers it changed, to be looked at and then recorded.
//
//	go test -tags answers -run TestAnswers ./imageops/            # compare
//	go test -tags answers -run TestAnswers ./imageops/ -update    # record
//	go test -tags answers -run TestAnswers ./imageops/ -dump DIR  # and write each answer to DIR
//
// About a minute of one core; not part of the suite (a build tag).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
	"carphoto/internal/testenv/datasets"
)

var (
	update = flag.Bool("update", false, "record the answers in testdata/answers.json")
	dump   = flag.String("dump", "", "write every answer's bytes to this folder, to look at those that changed")
)

// answerPhotos are the 12 photos: web photos (front, rear, a BMW and a
// Mini whose quads run tall, a close-up), dash-cam frames, and cars-seg
// whole cars (a distant small car among them).
var answerPhotos = []struct{ set, file string }{
	{"plates-web-cc0", "images/plates-web-cc0-0005.jpg"},
	{"plates-web-cc0", "images/plates-web-cc0-0020.jpg"},
	{"plates-web-cc0", "images/plates-web-cc0-0025.jpg"},
	{"plates-web-cc0", "images/plates-web-cc0-0057.jpg"},
	{"plates-web-cc0", "images/plates-web-cc0-0072.jpg"},
	{"plates-web-cc0", "images/plates-web-cc0-0415.jpg"},
	{"plates-dashcam-ro", "images/plates-dashcam-ro-0001.jpg"},
	{"plates-dashcam-ro", "images/plates-dashcam-ro-0010.jpg"},
	{"cars-seg", "images/cars-seg-0000.jpg"},
	{"cars-seg", "images/cars-seg-0007.jpg"},
	{"cars-seg", "images/cars-seg-0095.jpg"},
	{"cars-seg", "images/cars-seg-0137.jpg"},
}

// answerCase is one call: its name, its parameters, whether it takes the
// design or the backdrop, and whether it skips the block path.
type answerCase struct {
	name             string
	p                Params
	design, backdrop bool
	full             bool
}

var answerCases = []answerCase{
	{name: "blur-plates", p: Params{Op: BlurPlates}},
	{name: "blur-plates-full", p: Params{Op: BlurPlates}, full: true},
	{name: "blur-plates-pixelate-png", p: Params{Op: BlurPlates, Style: paint.StylePixelate, Format: "png"}},
	{name: "blur-plates-black-require", p: Params{Op: BlurPlates, Style: paint.StyleBlack, RequirePlate: true}},
	{name: "plate-logo", p: Params{Op: PlateLogo}, design: true},
	{name: "car-shadow", p: Params{Op: CarShadow}},
	{name: "car-shadow-reflection-colour", p: Params{Op: CarShadow, Reflection: true, Background: &Colour{R: 0xdd, G: 0xe3, B: 0xea, A: 255}, Format: "jpeg"}},
	{name: "car-cutout-crop-aspect-webp", p: Params{Op: CarCutout, Canvas: shadow.Canvas{Crop: true, Padding: 0.05, PaddingShare: true, Aspect: [2]int{4, 3}}, Format: "webp"}},
	{name: "car-shadow-backdrop", p: Params{Op: CarShadow, Reflection: true, Backdrop: &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}, Format: "jpeg"}, backdrop: true},
	{name: "car-cutout-backdrop", p: Params{Op: CarCutout, Backdrop: &shadow.Placement{FloorY: 0.8, Scale: 0.6, CenterX: 0.4}}, backdrop: true},
	{name: "car-shadow-plates-blur-backdrop", p: Params{Op: CarShadow, Plates: Plates{Hide: paint.StyleBlur}, Backdrop: &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}, Format: "jpeg"}, backdrop: true},
	{name: "car-cutout-plates-logo", p: Params{Op: CarCutout, Plates: PlatesLogo}, design: true},
	{name: "logo-overlay", p: Params{Op: LogoOverlay, Overlay: paint.OverlayOptions{Position: "bottom-right", Scale: 0.2, Opacity: 0.8, Margin: 0.03}}, design: true},
}

// answer is what the record keeps of one answer: its digest and size, or
// the error code it ended with.
type answer struct {
	SHA256 string `json:"sha256,omitempty"`
	Bytes  int    `json:"bytes,omitempty"`
	Error  string `json:"error,omitempty"`
}

func TestAnswers(t *testing.T) {
	design := readSample(t, "plate-design.png")
	backdrop := readSample(t, "backdrop.jpg")
	ctx := context.Background()
	got := map[string]answer{}
	for _, ph := range answerPhotos {
		photo := datasets.ReadFile(t, ph.set, ph.file)
		for _, c := range answerCases {
			in := Input{Photo: photo, Limits: codec.Limits{}}
			if c.design {
				in.Design = design
			}
			if c.backdrop {
				in.Backdrop = backdrop
			}
			key := filepath.Base(ph.file) + " " + c.name
			out, err := process(ctx, in, c.p, !c.full)
			if err != nil {
				got[key] = answer{Error: fmt.Sprint(err)}
				continue
			}
			if *dump != "" {
				ext := strings.TrimPrefix(out.ContentType, "image/")
				name := strings.TrimSuffix(filepath.Base(ph.file), ".jpg") + " " + c.name + "." + ext
				if err := os.WriteFile(filepath.Join(*dump, name), out.Body, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sum := sha256.Sum256(out.Body)
			got[key] = answer{SHA256: hex.EncodeToString(sum[:]), Bytes: len(out.Body)}
		}
	}
	path := filepath.Join("testdata", "answers.json")
	if *update {
		data, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d answers in %s", len(got), path)
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record them first with -update)", err)
	}
	var want map[string]answer
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	changed := 0
	for _, k := range keys {
		if w, ok := want[k]; !ok {
			t.Errorf("%s: not recorded", k)
			changed++
		} else if w != got[k] {
			t.Errorf("%s: got %+v, recorded %+v", k, got[k], w)
			changed++
		}
	}
	t.Logf("%d answers compared, %d changed", len(keys), changed)
}

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
