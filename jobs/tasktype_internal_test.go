package jobs

import (
	"slices"
	"testing"

	"carphoto/imageops"
)

// A studio call with plates hidden or a whole car required goes out as a
// task type only this release's workers handle; every other call keeps
// the type earlier workers handle too.
func TestStudioTaskTypeNeedsThisRelease(t *testing.T) {
	earlier := map[string]bool{}
	for _, op := range imageops.Ops {
		earlier[TaskType(op)] = true
	}
	for _, tc := range []struct {
		p      imageops.Params
		studio bool
	}{
		{imageops.Params{Op: imageops.BlurPlates}, false},
		{imageops.Params{Op: imageops.CarShadow}, false},
		{imageops.Params{Op: imageops.CarShadow, Plates: imageops.Plates{Hide: imageops.StyleBlur}}, true},
		{imageops.Params{Op: imageops.CarCutout, Plates: imageops.PlatesLogo}, true},
		{imageops.Params{Op: imageops.CarCutout, RequireWholeCar: true}, true},
	} {
		typ := taskTypeOf(tc.p)
		if !slices.Contains(TaskTypes(), typ) {
			t.Errorf("%+v: task type %q, which this release's workers do not handle", tc.p, typ)
		}
		if earlier[typ] == tc.studio {
			t.Errorf("%+v: task type %q handled by earlier workers: %v, want %v", tc.p, typ, earlier[typ], !tc.studio)
		}
	}
}
