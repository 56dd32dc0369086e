package server

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"carphoto"
	"carphoto/imageops"
)

// A call's fields become the parameters Process takes, with the documented
// defaults; every value out of its range is refused naming the field.
func TestParseParams(t *testing.T) {
	for _, tc := range []struct {
		op       imageops.Op
		v        map[string]string
		backdrop bool
		want     imageops.Params
		says     string // the error's message, when refused
	}{
		{op: imageops.LogoOverlay, v: map[string]string{},
			want: imageops.Params{Op: imageops.LogoOverlay, Overlay: imageops.OverlayOptions{Position: "bottom-right", Scale: 0.2, Opacity: 1, Margin: 0.03}}},
		{op: imageops.LogoOverlay, v: map[string]string{"position": "center", "scale": "1", "opacity": "0", "margin": "0.45"},
			want: imageops.Params{Op: imageops.LogoOverlay, Overlay: imageops.OverlayOptions{Position: "center", Scale: 1, Opacity: 0, Margin: 0.45}}},
		{op: imageops.LogoOverlay, v: map[string]string{"scale": "0"}, says: `scale must be a number above 0 to 1, not "0"`},
		{op: imageops.LogoOverlay, v: map[string]string{"position": "middle"}, says: `position must be one of`},
		{op: imageops.BlurPlates, v: map[string]string{"style": "pixelate", "requirePlate": "true"},
			want: imageops.Params{Op: imageops.BlurPlates, Style: imageops.StylePixelate, RequirePlate: true}},
		{op: imageops.BlurPlates, v: map[string]string{"style": "sparkle"}, says: "style must be one of blur, pixelate, white, black"},
		{op: imageops.PlateLogo, v: map[string]string{"format": "png"}, want: imageops.Params{Op: imageops.PlateLogo, Format: "png"}},
		{op: imageops.CarShadow, v: map[string]string{"crop": "true", "padding": "5%", "aspect": "4:3", "background": "#FFFFFF", "reflection": "true"},
			want: imageops.Params{Op: imageops.CarShadow, Reflection: true, Canvas: imageops.Canvas{Crop: true, Padding: 0.05, PaddingShare: true, Aspect: [2]int{4, 3}}, Background: &imageops.Colour{R: 255, G: 255, B: 255, A: 255}}},
		{op: imageops.CarCutout, v: map[string]string{"background": "transparent"}, want: imageops.Params{Op: imageops.CarCutout}},
		{op: imageops.CarCutout, v: map[string]string{"aspect": "0:3"}, says: "aspect must be width:height"},
		{op: imageops.CarCutout, v: map[string]string{"scale": "0.5", "floorY": "0.9"}, says: "floorY, scale place the car on a backdrop"},
		{op: imageops.CarCutout, v: map[string]string{}, backdrop: true,
			want: imageops.Params{Op: imageops.CarCutout, Backdrop: &imageops.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}}},
		{op: imageops.CarShadow, v: map[string]string{"crop": "true"}, backdrop: true, says: "crop does not apply with a backdrop"},
		{op: imageops.CarShadow, v: map[string]string{"centerX": "2"}, backdrop: true, says: `centerX must be a number from 0 to 1, not "2"`},
	} {
		got, err := parseParams(tc.op, tc.v, tc.backdrop)
		if tc.says != "" {
			if carphoto.ErrorCode(err) != carphoto.EInvalidParams || !strings.Contains(carphoto.ErrorMessage(err), tc.says) {
				t.Errorf("%s %v: error %v, want invalid_params saying %q", tc.op, tc.v, err, tc.says)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v: got %+v, %v; want %+v", tc.op, tc.v, got, err, tc.want)
		}
	}
	if _, err := parseParams("paint-it-red", nil, false); carphoto.ErrorCode(err) != carphoto.EUnknownTool {
		t.Errorf("an unknown op: %v, want unknown_tool", err)
	}
}

// Every name paramNamesOf lists is read by parseParams: a value out of its
// range for each is refused naming it, so no documented field is ignored.
func TestParamNamesAreRead(t *testing.T) {
	for _, op := range imageops.Ops {
		for _, name := range paramNamesOf(op) {
			backdrop := slices.Contains(placementNames, name) && op != imageops.LogoOverlay
			_, err := parseParams(op, map[string]string{name: "§"}, backdrop)
			if err == nil || !strings.Contains(carphoto.ErrorMessage(err), name) {
				t.Errorf("%s: %s=§ gave %v, want an error naming %s", op, name, err, name)
			}
		}
	}
}
