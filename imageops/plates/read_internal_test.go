package plates

import (
	"image"
	"image/draw"
	"math"
	"slices"
	"testing"

	"carphoto/imageops/textrec"
	"carphoto/internal/testenv/imgtest"
)

// TestReadCap: of 40 unsure text lines, the finder reads maxReads, the
// verifiers' likeliest first, and none an accepted plate covers.
func TestReadCap(t *testing.T) {
	j := DefaultSettings().Judge
	var judged []verified
	for i := range 40 {
		x := float64(100 * (i % 8))
		y := float64(60 * (i / 8))
		line := box{score: textPrior, text: true, x0: x, y0: y, x1: x + 80, y1: y + 20}
		judged = append(judged, verified{p: 0.1 + 0.02*float64(i), first: textPrior, box: line, quad: quadOf(line), text: true, prop: line})
	}
	// A plate the first stage found, over line 39's box.
	plate := box{x0: 695, y0: 235, x1: 785, y1: 265}
	judged = append(judged, verified{p: 0.99, first: 0.9, box: plate, quad: quadOf(plate)})
	cands := j.candidates(judged)
	if len(cands) != maxReads {
		t.Fatalf("%d lines read, want %d", len(cands), maxReads)
	}
	for k, c := range cands {
		if want := 38 - k; c.at != want {
			t.Errorf("read %d is line %d, want %d (the likeliest first, line 39 covered)", k, c.at, want)
		}
	}
}

// TestReadWidth: a photo full of long lines reads as many as fit in
// readWidth pixels at the reader's height, the likeliest first, and a short
// line further down the order still gets its read.
func TestReadWidth(t *testing.T) {
	j := DefaultSettings().Judge
	var judged []verified
	for i := range 10 {
		y := float64(40 * i)
		line := box{score: textPrior, text: true, x0: 0, y0: y, x1: 200, y1: y + 20} // 480 px at the reader's height
		if i == 9 {
			line.x1 = 40 // 96 px
		}
		judged = append(judged, verified{p: 0.6 - 0.02*float64(i), first: textPrior, box: line, quad: quadOf(line), text: true, prop: line})
	}
	cands := j.candidates(judged)
	var got []int
	width := 0.0
	for _, c := range cands {
		got = append(got, c.at)
		for _, l := range c.lines {
			width += textrec.Height * (l.x1 - l.x0) / (l.y1 - l.y0)
		}
	}
	if want := []int{0, 1, 9}; !slices.Equal(got, want) {
		t.Errorf("read lines %v, want %v", got, want)
	}
	if width > readWidth {
		t.Errorf("%.0f pixels of line read, more than %d", width, readWidth)
	}
}

func quadOf(b box) Quad {
	return Quad{{b.x0, b.y0}, {b.x1, b.y0}, {b.x1, b.y1}, {b.x0, b.y1}}
}

// TestStacked: the two rows of a plate are read together; lines side by
// side, far apart or of very different heights are not.
func TestStacked(t *testing.T) {
	top := box{x0: 100, y0: 100, x1: 160, y1: 120}
	for _, c := range []struct {
		b    box
		want bool
	}{
		{box{x0: 95, y0: 122, x1: 165, y1: 145}, true},   // the row below
		{box{x0: 105, y0: 78, x1: 150, y1: 99}, true},    // the row above
		{box{x0: 170, y0: 100, x1: 230, y1: 120}, false}, // beside it
		{box{x0: 100, y0: 160, x1: 160, y1: 180}, false}, // far below
		{box{x0: 100, y0: 121, x1: 160, y1: 200}, false}, // much taller
	} {
		if got := stacked(top, c.b); got != c.want {
			t.Errorf("stacked(%v, %v) = %v, want %v", top, c.b, got, c.want)
		}
	}
}

// TestReadingCounts: the judge sees counts of letters, digits and other
// characters and the confidences, not the text.
func TestReadingCounts(t *testing.T) {
	r := readOf([]textrec.Reading{{Text: "RLG", Conf: []float64{0.9, 0.8, 1}}, {Text: "98-5中", Conf: []float64{1, 1, 0.5, 1, 0.2}}})
	if r.letters != 3 || r.digits != 3 || r.others != 1 {
		t.Errorf("letters %d digits %d others %d, want 3 3 1", r.letters, r.digits, r.others)
	}
	if r.least != 0.2 || r.mean < 0.79 || r.mean > 0.81 {
		t.Errorf("mean %.3f least %.2f, want 0.800 0.20", r.mean, r.least)
	}
}

// TestReadingShape: the judge tells a plate's "AB 123 CD" from a phone
// number's long run of digits, a badge's two groups and a sign's
// lower-case words by counts of the reading's shape.
func TestReadingShape(t *testing.T) {
	for _, c := range []struct {
		text                    string
		digitRun, groups, lower int
	}{
		{"AB 123 CD", 3, 3, 0},
		{"MH02BJ5997", 4, 4, 0},
		{"T: 01902 791997", 6, 3, 0},
		{"E220", 3, 2, 0},
		{"West 38th St", 2, 4, 6},
		{"12.34", 2, 2, 0},
		{"", 0, 0, 0},
	} {
		conf := make([]float64, len([]rune(c.text)))
		r := readOf([]textrec.Reading{{Text: c.text, Conf: conf}})
		if r.digitRun != c.digitRun || r.groups != c.groups || r.lower != c.lower {
			t.Errorf("%q: digit run %d groups %d lower %d, want %d %d %d", c.text, r.digitRun, r.groups, r.lower, c.digitRun, c.groups, c.lower)
		}
	}
	// The two lines of a two-row plate are two readings: a group does not
	// run on from one into the next.
	r := readOf([]textrec.Reading{{Text: "AB12", Conf: make([]float64, 4)}, {Text: "34CD", Conf: make([]float64, 4)}})
	if r.digitRun != 2 || r.groups != 4 {
		t.Errorf("two rows: digit run %d groups %d, want 2 4", r.digitRun, r.groups)
	}
}

// TestDesignRule: a sure plate of a plate's aspect gets the design
// whatever its country's character height (a US plate's characters are
// half its height), and so does a vanity plate of letters alone the
// verifier is surest of and a plate too blurred to read, and a plate the
// verifier doubts that reads as a plate (letters and digits, capitals,
// nothing else); lettering, a sign's word, a long number, a doubtful
// detection that reads as anything else or nothing, and a shape no plate
// has do not.
func TestDesignRule(t *testing.T) {
	q := Quad{{100, 100}, {200, 100}, {200, 150}, {100, 150}} // 100 × 50: a US plate's 2:1
	line := []box{{x0: 110, y0: 112, x1: 190, y1: 137}}
	for _, c := range []struct {
		name  string
		score float64
		quad  Quad
		reads bool
		print Printed
		want  bool
	}{
		{"a US plate, characters half its height", 0.99, q, true, Printed{Letters: 3, Digits: 4, Mean: 0.9}, true},
		{"a vanity plate", 0.99, q, false, Printed{Letters: 6, Digits: 0, Mean: 0.95}, true},
		{"a plate too blurred to read", 0.96, q, false, Printed{Letters: 1, Digits: 0, Mean: 0.3}, true},
		{"three digits read", 0.96, q, false, Printed{Letters: 0, Digits: 3, Mean: 0.8}, true},
		{"nothing read, the verifier less sure", 0.945, q, false, Printed{Letters: 0, Digits: 2, Mean: 0.78}, false},
		{"lettering", 0.961, q, false, Printed{Letters: 6, Digits: 0, Mean: 0.99}, false},
		{"a bumper's two letters", 0.969, q, false, Printed{Letters: 2, Digits: 0, Mean: 0.97}, false},
		{"a phone number", 0.99, q, false, Printed{Letters: 0, Digits: 10, Mean: 0.9}, false},
		{"doubtful, read as a plate", 0.8, q, true, Printed{Letters: 3, Digits: 4, Mean: 0.9}, true},
		{"doubtful, nothing read", 0.93, q, false, Printed{Mean: 0.1}, false},
		{"doubtful, digits alone: a fleet number", 0.9, q, true, Printed{Digits: 5, Mean: 0.95}, false},
		{"doubtful, a word", 0.9, q, false, Printed{Letters: 6, Mean: 0.95}, false},
		{"doubtful, lower case: an advert", 0.9, q, true, Printed{Letters: 8, Digits: 2, Lower: 7, Mean: 0.95}, false},
		{"doubtful, a price's sign", 0.9, q, true, Printed{Letters: 1, Digits: 4, Others: 1, Mean: 0.9}, false},
		{"doubtful, too long for a plate: a sign", 0.9, q, true, Printed{Letters: 9, Digits: 3, Mean: 0.9}, false},
		{"doubtful, a quad 4× its text: a grille", 0.9, Quad{{100, 100}, {200, 100}, {200, 200}, {100, 200}}, true, Printed{Letters: 3, Digits: 4, Mean: 0.9}, false},
		{"a strip no plate is", 0.99, Quad{{0, 0}, {400, 0}, {400, 50}, {0, 50}}, true, Printed{Letters: 3, Digits: 4, Mean: 0.9}, false},
		{"a tower no plate is", 0.99, Quad{{0, 0}, {30, 0}, {30, 60}, {0, 60}}, true, Printed{Letters: 3, Digits: 4, Mean: 0.9}, false},
	} {
		p := Plate{Quad: c.quad, Score: c.score, Reads: c.reads, Printed: c.print, lines: line, TextHeight: 25}
		if got := p.Designable(); got != c.want {
			t.Errorf("%s: Designable %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDesignQuadFitsTheText: a quad no taller than fitTaller × its text
// lines is the design's; a taller one (issue 54's BMW: 57 px on lines of
// 15, reaching onto the grille) is cut to the band the lines give, centred
// on them and inside the quad.
func TestDesignQuadFitsTheText(t *testing.T) {
	q := Quad{{100, 100}, {200, 100}, {200, 157}, {100, 157}}
	us := Plate{Quad: q, TextHeight: 28, lines: []box{{x0: 110, y0: 114, x1: 190, y1: 142}}}
	if got := us.DesignQuad(); got != q {
		t.Errorf("a quad 2.0× its lines: DesignQuad %v, want the quad %v", got, q)
	}
	bmw := Plate{Quad: q, TextHeight: 15, lines: []box{{x0: 110, y0: 130, x1: 190, y1: 145}}}
	got := bmw.DesignQuad()
	if h := got.Height(); math.Abs(h-fitTaller*15) > 0.01 {
		t.Errorf("the BMW: a design %.1f px tall, want %.1f", h, fitTaller*15)
	}
	if mid := (got[0].Y + got[3].Y) / 2; math.Abs(mid-137.5) > 0.01 || got[0].X != 100 || got[1].X != 200 {
		t.Errorf("the BMW: design %v, want centred on the lines (y 137.5) across the quad", got)
	}
	low := Plate{Quad: q, TextHeight: 15, lines: []box{{x0: 110, y0: 142, x1: 190, y1: 157}}}
	if got := low.DesignQuad(); got[2].Y > 157.001 || got[3].Y > 157.001 || math.Abs(got.Height()-fitTaller*15) > 0.01 {
		t.Errorf("lines at the quad's foot: design %v, want inside the quad, %.1f px tall", got, fitTaller*15)
	}
}

// TestPlateLike: what reads like a plate gets plate-logo's design; a
// make's badge, a sign, a phone number and a blurred smudge do not.
func TestPlateLike(t *testing.T) {
	for _, c := range []struct {
		text string
		conf float64
		want bool
	}{
		{"TN21BY0166", 0.9, true},
		{"WOR 516K", 0.8, true},
		{"4002", 0.7, true},
		{"SWIFT", 0.95, false},        // letters alone: a badge (or a vanity plate, hidden instead)
		{"020 8851 5551", 0.9, false}, // a phone number
		{"AB1", 0.9, false},           // too short
		{"KL54A2670", 0.3, false},     // unsure
	} {
		conf := make([]float64, len([]rune(c.text)))
		for i := range conf {
			conf[i] = c.conf
		}
		if got := plateLike(readOf([]textrec.Reading{{Text: c.text, Conf: conf}})); got != c.want {
			t.Errorf("%q at %.1f: plateLike %v, want %v", c.text, c.conf, got, c.want)
		}
	}
}

// TestSameRow: a plate's character groups the detector split are one row.
func TestSameRow(t *testing.T) {
	tn := box{x0: 159, y0: 147, x1: 187, y1: 160}
	for _, c := range []struct {
		b    box
		want bool
	}{
		{box{x0: 192, y0: 147, x1: 216, y1: 158}, true},  // "02" beside it
		{box{x0: 223, y0: 146, x1: 251, y1: 159}, false}, // "BL": joined through "02"
		{box{x0: 127, y0: 235, x1: 279, y1: 251}, false}, // a line below
		{box{x0: 240, y0: 147, x1: 270, y1: 160}, false}, // too far
	} {
		if got := sameRow(tn, c.b); got != c.want {
			t.Errorf("sameRow(%v, %v) = %v, want %v", tn, c.b, got, c.want)
		}
	}
}

// TestDesignReadsBounded: a photo with more sure plates than
// maxDesignReads reads no more than that; the plates left unread are
// hidden, not designed.
func TestDesignReadsBounded(t *testing.T) {
	img := imgtest.DecodeFile(t, "../../docs/samples/car.jpg")
	found, err := Detect(t.Context(), img)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Score < DesignConfidence {
		t.Fatalf("the sample car: %d plates found, want its one sure plate", len(found))
	}
	many := slices.Repeat(found, 2*maxDesignReads)
	if err := ReadPlates(t.Context(), img, many); err != nil {
		t.Fatal(err)
	}
	for i, p := range many {
		if want := i < maxDesignReads; p.Reads != want {
			t.Errorf("plate %d of %d: Reads %v, want %v (the first %d read)", i, len(many), p.Reads, want, maxDesignReads)
		}
	}
}

// TestReadingShared: a plate's reading on its own quad is kept with the
// view it was read on; ReadPlates on the same photo uses it and reads
// nothing again (the lettering rule's reading during detection), and on
// another photo, even one of the same pixels (the studio finds plates in
// the JPEG's blocks and reads them on the decoded photo), reads anew.
func TestReadingShared(t *testing.T) {
	img := imgtest.DecodeFile(t, "../../docs/samples/car.jpg")
	found, err := Detect(t.Context(), img)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Fatalf("the sample car: %d plates found, want 1", len(found))
	}
	// A reading no reader would give the sample's plate: 9 digits alone.
	kept := reading{digits: 9, mean: 0.99}
	found[0].own = ownReading{read: kept, view: wholeView(img).key(), done: true}
	same := slices.Clone(found)
	if err := ReadPlates(t.Context(), img, same); err != nil {
		t.Fatal(err)
	}
	if same[0].Printed.Digits != 9 || same[0].Reads {
		t.Errorf("the same photo: Printed %+v, Reads %v; want the kept reading, 9 digits, not plate-like", same[0].Printed, same[0].Reads)
	}
	copied := image.NewRGBA(img.Bounds())
	draw.Draw(copied, copied.Rect, img, img.Bounds().Min, draw.Src)
	other := slices.Clone(found)
	if err := ReadPlates(t.Context(), copied, other); err != nil {
		t.Fatal(err)
	}
	if !other[0].Reads || other[0].Printed.Digits == 9 {
		t.Errorf("another photo: Printed %+v, Reads %v; want the plate read anew, like a plate", other[0].Printed, other[0].Reads)
	}
	if _, ok := other[0].own.on(wholeView(copied)); !ok {
		t.Error("another photo: its reading not kept with its view")
	}
}
