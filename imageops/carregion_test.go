package imageops

import (
	"context"
	"image"
	"os"
	"path/filepath"
	"testing"

	"carphoto"
	"carphoto/imageops/carseg"
	"carphoto/imageops/internal/nn"
	"carphoto/imageops/vehicles"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

// On the repository's sample car, the segmenter's own map with a person
// painted into it: standing in front of the car's middle (from the
// ground up over its doors) they are cut out of the gate and the car is
// occluded; standing beside its end they are cut out and it is not. A man
// standing in front whom the detector boxes whole (his head above the
// roof) and again from the waist down (a box inside the car's, which alone
// would pass for a driver) is cut out too: one person, not in the car.
func TestRegionCutsOutAPersonInFrontOrBeside(t *testing.T) {
	img := imgtest.DecodeFile(t, imgtest.SamplePath("car.jpg"))
	ctx := context.Background()
	objs, err := vehicles.Detect(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	car, ok := vehicles.Main(objs, img.Bounds())
	if !ok {
		t.Fatal("no vehicle in the sample car")
	}
	b := img.Bounds()
	crop := grow(car.Box, cropMargin, b)
	box := car.Box
	standing := image.Rect(box.Min.X+box.Dx()*2/5, box.Min.Y-box.Dy()/5, box.Min.X+box.Dx()*3/5, box.Max.Y)
	waistDown := image.Rect(standing.Min.X+box.Dx()/40, box.Min.Y+box.Dy()/2, standing.Max.X, box.Max.Y)
	for _, c := range []struct {
		what     string
		person   image.Rectangle   // in the photo
		boxes    []image.Rectangle // the detector's boxes of the person
		occluded bool
	}{
		{"in front of the doors", image.Rect(box.Min.X+box.Dx()*2/5, box.Min.Y+box.Dy()/5, box.Min.X+box.Dx()*3/5, b.Max.Y), nil, true},
		{"beside the car's end", image.Rect(box.Max.X-box.Dx()/20, box.Min.Y-box.Dy()/5, box.Max.X+box.Dx()/10, box.Max.Y), nil, false},
		{"in front, boxed whole and from the waist down", standing, []image.Rectangle{standing, waistDown}, true},
	} {
		m, err := carseg.Segment(ctx, subImage(img, crop))
		if err != nil {
			t.Fatal(err)
		}
		g := gridRect(m, c.person)
		for y := g.Min.Y; y < g.Max.Y; y++ {
			for x := g.Min.X; x < g.Max.X; x++ {
				m.Class[y*m.W+x] = carseg.Person
			}
		}
		s := &scene{objs: []vehicles.Object{car}}
		for _, pb := range c.boxes {
			s.objs = append(s.objs, vehicles.Object{Class: vehicles.Person, Score: 0.5, Box: pb})
		}
		r := regionOf(m, box, grow(box, gateMargin, b), s.peopleInCar(box))
		if r == nil {
			t.Fatalf("%s: no car region on the sample car", c.what)
		}
		if r.occluded != c.occluded {
			t.Errorf("%s: occluded %v, want %v", c.what, r.occluded, c.occluded)
		}
		gate := r.grid.Mask(crop, carseg.IsVehicle)
		mid := image.Pt((c.person.Min.X+c.person.Max.X)/2, (c.person.Min.Y+max(c.person.Max.Y, box.Max.Y))/2)
		mid.Y = min(mid.Y, box.Max.Y-box.Dy()/4)
		if gate.AlphaAt(mid.X, mid.Y).A != 0 {
			t.Errorf("%s: the person at %v is kept", c.what, mid)
		}
		// The car beside them is kept.
		at := image.Pt(box.Min.X+box.Dx()/4, box.Min.Y+box.Dy()*2/3)
		if gate.AlphaAt(at.X, at.Y).A == 0 {
			t.Errorf("%s: the car at %v is not kept", c.what, at)
		}
	}
}

// On real photos (plates-web-cc0, outside the held-out split): a man in
// front of a hatchback's left side is cut out of it and the car is
// occluded; on a small car with its driver behind the glass and men
// standing beside it, the driver is kept, the men are not, and the car is
// not occluded; on an old Ford with people behind it, they are not kept.
func TestStudioCarDropsPeopleOnPhotos(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		file     string
		occluded bool
		kept     []image.Point
		dropped  []image.Point
	}{
		{"plates-web-cc0-0027.jpg", true, []image.Point{{220, 200}, {180, 100}}, []image.Point{{75, 120}, {90, 220}}},
		{"plates-web-cc0-0060.jpg", false, []image.Point{{150, 130}, {100, 230}}, []image.Point{{340, 150}, {330, 250}}},
		{"plates-web-cc0-0088.jpg", false, []image.Point{{150, 120}}, []image.Point{{240, 40}, {285, 100}}},
	} {
		if datasets.HeldOut(c.file) {
			t.Fatalf("%s is held out", c.file)
		}
		img := imgtest.DecodeFile(t, datasets.File(t, "plates-web-cc0", filepath.Join("images", c.file)))
		car, chosen, err := chosenCar(ctx, img)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if chosen.occluded != c.occluded {
			t.Errorf("%s: occluded %v, want %v", c.file, chosen.occluded, c.occluded)
		}
		for _, p := range c.kept {
			if car.NRGBAAt(p.X, p.Y).A < 128 {
				t.Errorf("%s: the car at %v is not kept", c.file, p)
			}
		}
		for _, p := range c.dropped {
			if a := car.NRGBAAt(p.X, p.Y).A; a != 0 {
				t.Errorf("%s: the person at %v is kept (alpha %d)", c.file, p, a)
			}
		}
	}
}

// car-cutout says a person in front of the car was cut out of it
// (Output.CarOccluded), and requireWholeCar=true refuses it: car_occluded.
func TestCarOccludedAnswered(t *testing.T) {
	photo := datasets.ReadFile(t, "plates-web-cc0", "images/plates-web-cc0-0027.jpg")
	ctx := context.Background()
	out, err := Process(ctx, Input{Photo: photo}, Params{Op: CarCutout})
	if err != nil {
		t.Fatal(err)
	}
	if !out.CarOccluded {
		t.Error("car-cutout of a car with a man in front of it: CarOccluded false")
	}
	_, err = Process(ctx, Input{Photo: photo}, Params{Op: CarCutout, RequireWholeCar: true})
	if code := carphoto.ErrorCode(err); code != carphoto.ECarOccluded {
		t.Errorf("requireWholeCar=true: %v, want car_occluded", err)
	}
}

// The car's region is the same to within 2% of its cells with the
// segmenter's integer layers as in float, on the sample car and the
// photos above, and says the same of a person in front.
func TestRegionIntegerAgreesWithFloat(t *testing.T) {
	ctx := context.Background()
	paths := []string{imgtest.SamplePath("car.jpg")}
	if _, err := os.Stat(filepath.Join(datasets.Dir(), "plates-web-cc0")); err == nil {
		for _, f := range []string{"plates-web-cc0-0027.jpg", "plates-web-cc0-0060.jpg", "plates-web-cc0-0088.jpg"} {
			paths = append(paths, datasets.File(t, "plates-web-cc0", filepath.Join("images", f)))
		}
	}
	for _, path := range paths {
		img := imgtest.DecodeFile(t, path)
		objs, err := vehicles.Detect(ctx, img)
		if err != nil {
			t.Fatal(err)
		}
		car, ok := vehicles.Main(objs, img.Bounds())
		if !ok {
			t.Fatalf("%s: no vehicle", path)
		}
		s := &scene{objs: objs}
		crop := grow(car.Box, cropMargin, img.Bounds())
		region := func(integers bool) *carRegion {
			defer nn.SetIntegers(integers)()
			r, err := s.segmentRegion(ctx, img, car, crop, img.Bounds())
			if err != nil {
				t.Fatal(err)
			}
			if r == nil {
				t.Fatalf("%s: no region", path)
			}
			return r
		}
		fl, in := region(false), region(true)
		differ, cells := 0, 0
		for i, c := range fl.grid.Class {
			if c == carseg.Car {
				cells++
			}
			if c != in.grid.Class[i] {
				differ++
			}
		}
		if float64(differ) > 0.02*float64(cells) {
			t.Errorf("%s: %d of the region's %d cells differ between integer and float", filepath.Base(path), differ, cells)
		}
		if fl.occluded != in.occluded {
			t.Errorf("%s: occluded %v in float, %v on integers", filepath.Base(path), fl.occluded, in.occluded)
		}
	}
}
