package plates

import (
	"cmp"
	"context"
	"image"
	"reflect"
	"slices"

	"carphoto/imageops/textrec"
)

// plate-logo's design rule: which plates get the design (Designable), where
// on them (DesignQuad), and the reading of each plate it rests on
// (ReadPlates).

// The design rule reads the plate itself, never a ratio that one
// country's plates fail: the verifier's score, the quad's
// aspect against the world's plate formats, and what is printed on it.
const (
	// minPlateAspect and maxPlateAspect bound a plate's width ÷ height:
	// the world's formats run from about 1:1 (two-row square plates:
	// motorcycles, Japan's and Korea's rear plates, some US states' small
	// plates) to 4.7:1 (the EU's long one-row plate), with room for the
	// detector's quad falling a little short or long.
	minPlateAspect = 0.8
	maxPlateAspect = 6.5
	// wordSure is the verifier's score at which a word (letters alone,
	// read clearly) is taken for a plate: a vanity plate, or a plate whose
	// characters the reader takes for letters. On the validation photos
	// the words that were not plates scored below it ("POLICE" on a boot
	// lid 0.961, a street sign 0.973, "END" on a road sign 0.969, "FB" on a
	// bumper 0.969), the vanity plates above it (0.976 to 1.000) but one
	// (0.955). A badge the verifier is surer of still gets a design
	// ("BUGATTI" on a grille, 0.992): the verifier's to learn.
	wordSure = 0.975
	// fitTaller is how many times its text lines' height a plate's design
	// may be: a US plate's characters are about half its height (a state's
	// name above, a slogan below), an EU plate's about three quarters. A
	// quad taller than that reaches past the plate (onto a grille or a
	// badge: a BMW's, 57 px on lines of 15) and the design is
	// fitted to the band of that height centred on the lines (DesignQuad).
	fitTaller = 2.1
	// unreadSure is the verifier's score a plate the reader reads next to
	// nothing on (small, far or blurred) needs: what is not read cannot
	// speak against it, so the verifier must be a little surer. On the
	// validation photos a window (0.949) and a seat's number (0.945) fell
	// below it, and 2 of 38 such plates; lamps, badges and a window scored
	// 0.955 to 0.995 and get a design: the verifier's to learn.
	unreadSure = 0.95
)

// Designable reports whether plate-logo puts the design on p (on
// DesignQuad): every plate blur-plates hides whose outline can be trusted,
// decided from the plate itself. Its quad must have a plate's aspect.
// Then either the verifiers are sure of it (a score of at least
// DesignConfidence), unless what ReadPlates read on it says otherwise: a
// word read clearly (letters alone, no digit: lettering, a sign, or a
// vanity plate) needs the verifier surer (wordSure), and four or more
// characters read clearly that do not read like a plate (a long number
// alone: a phone number on a van) get none; what reads next to nothing (a
// small, far or blurred plate) does not count against it where the
// verifier is a little surer (unreadSure). Or, below DesignConfidence,
// what is printed on it reads as a plate's (readsAsPlate). A design on a
// sign, a badge or a make's name shows; anything not designed is hidden as
// blur-plates hides it.
func (p Plate) Designable() bool {
	if p.looked && p.inView && !p.onVehicle && !p.Reads { // off every vehicle in view: only what reads as a plate
		return false
	}
	if a := p.Quad.Width() / max(p.Quad.Height(), 1e-9); a < minPlateAspect || a > maxPlateAspect {
		return false
	}
	if p.Score < DesignConfidence {
		return p.readsAsPlate() || p.atSpot && p.readsAtSpot()
	}
	r := p.Printed
	switch {
	case p.Reads:
		return true
	case r.Mean >= 0.5 && r.Digits == 0 && r.Letters >= 2: // a word
		return p.Score >= wordSure
	}
	return (r.Mean < 0.5 || r.Letters+r.Digits < 4) && p.Score >= unreadSure // next to nothing read
}

// An unsure plate's design rests on its reading, so the reading must be a
// plate's in every country's formats: letters and digits both, 4 to
// maxPlateChars of them (plateLike), in capitals, with nothing else printed
// (a price's currency sign, a date's slashes), on a quad at most
// unsureTaller × its text lines where the text detector found them.
// Letters alone (a word, a sign) or digits alone (a fleet number, a bib,
// a date, a price) are not enough on an unsure detection; a plate of
// letters or digits alone is designed where the verifiers are sure of it.
// The validation counts behind the rule: docs/research/plates.md, "The
// unsure plate's design rule" (TestDesignCoverage).
const (
	maxPlateChars = 10
	unsureTaller  = 3
)

// readsAsPlate reports whether what ReadPlates read on p reads as a plate
// (above).
func (p Plate) readsAsPlate() bool {
	r := p.Printed
	if !p.Reads || r.Letters == 0 || r.Letters+r.Digits > maxPlateChars || r.Others > 0 || r.Lower > 0 {
		return false
	}
	return p.TextHeight == 0 || p.Quad.Height() <= unsureTaller*p.TextHeight
}

// readsAtSpot reports whether what ReadPlates read on p, a doubted plate
// sitting where a plate sits on its vehicle, is enough for the design: its
// lines read like a plate's (a turned plate's quad may run taller than
// unsureTaller × its lines, and be read as digits alone), and no more than
// a plate holds (a dealer's lettering on the boot, 24 characters, does not:
// held-out web 0083).
func (p Plate) readsAtSpot() bool {
	r := p.Printed
	return p.Reads && r.Letters+r.Digits <= maxPlateChars && r.Others == 0 && r.Lower == 0
}

// DesignQuad is where plate-logo's design goes on p: its quad, or where
// the quad is more than fitTaller × its text lines' height, the band of
// the quad that height centred on the lines: the plate's outline as its
// characters give it, not the grille the quad reaches onto.
func (p Plate) DesignQuad() Quad {
	q := p.Quad
	_, y0, _, y1, ok := p.Text()
	h := q.Height()
	if !ok || h <= fitTaller*p.TextHeight || h <= 0 {
		return q
	}
	// v runs from 0 at the quad's top edge to 1 at its bottom edge,
	// measured by the mean height of its left and right edges.
	top := (q[0].Y + q[1].Y) / 2
	bottom := (q[3].Y + q[2].Y) / 2
	if bottom-top <= 0 {
		return q
	}
	centre := ((y0+y1)/2 - top) / (bottom - top)
	half := fitTaller * p.TextHeight / 2 / (bottom - top)
	v0, v1 := centre-half, centre+half
	if v0 < 0 {
		v0, v1 = 0, v1-v0
	}
	if v1 > 1 {
		v0, v1 = max(0, v0-(v1-1)), 1
	}
	lerp := func(a, b Point, t float64) Point { return Point{a.X + t*(b.X-a.X), a.Y + t*(b.Y-a.Y)} }
	return Quad{lerp(q[0], q[3], v0), lerp(q[1], q[2], v0), lerp(q[1], q[2], v1), lerp(q[0], q[3], v1)}
}

// ReadPlates reads each plate of found, on img, the surest first, and sets
// its Reads and Printed: whether it reads like a plate (plateLike), read on
// its own quad rectified and, where that reads next to nothing, on the
// text lines found on it. plate-logo calls it; blur-plates hides every
// plate found and needs no reading. What is read decides that alone: it
// is never logged, stored or returned.
func ReadPlates(ctx context.Context, img image.Image, found []Plate) error {
	return readPlates(ctx, wholeView(img), found)
}

// ReadPlatesIn is ReadPlates on a Source's regions (DetectIn's plates).
func ReadPlatesIn(ctx context.Context, src Source, found []Plate) error {
	return readPlates(ctx, view{photo: src.Bounds(), src: src}, found)
}

// maxDesignReads bounds the lines ReadPlates reads a photo (quads and text
// lines together, about 7–13 ms of one core each): the surest plates are
// read first, and a photo with more plates than that leaves the rest
// unread, and so hidden, not designed. A plate the lettering rule already
// read on the same view is not read again and does not count.
const maxDesignReads = 12

func readPlates(ctx context.Context, v view, found []Plate) error {
	order := make([]int, len(found))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(found[b].Score, found[a].Score) })
	reads := 0
	for _, i := range order {
		p := &found[i]
		// The plate's own quad, rectified, reads a tilted plate whole;
		// where it reads next to nothing (a two-row plate, which the
		// reader takes as one line) or a word (a plate whose digits the
		// reader took for letters on the whole quad: dash-cam plates),
		// the text lines on it are read, and a word is kept unless they
		// read like a plate. On the validation photos that designs 4
		// more labelled plates and nothing more that is not a plate.
		_, known := p.own.on(v) // read already, by the lettering rule
		if !known && reads == maxDesignReads {
			continue
		}
		whole, err := readOwnQuad(ctx, v, p)
		if err != nil {
			return err
		}
		if !known {
			reads++
		}
		p.Printed = printedOf(whole)
		word := whole.digits == 0 && whole.letters >= 2
		if p.Reads = plateLike(whole); p.Reads || whole.letters+whole.digits >= 4 && !word {
			continue
		}
		var rs []textrec.Reading
		for _, l := range p.lines[:min(len(p.lines), maxDesignReads-reads)] {
			r, err := readLine(ctx, v, l)
			if err != nil {
				return err
			}
			rs, reads = append(rs, r), reads+1
		}
		if lr := readOf(rs); len(rs) > 0 && (plateLike(lr) || whole.letters+whole.digits < 4) {
			p.Printed = printedOf(lr)
			p.Reads = plateLike(lr)
		}
	}
	return nil
}

// readOwnQuad reads p on its own quad, rectified, on v (p's quad is in
// photo pixels, v's reads relative to its photo's origin), and keeps the
// reading on p with the view (ownReading): nothing reads it twice.
func readOwnQuad(ctx context.Context, v view, p *Plate) (reading, error) {
	if r, ok := p.own.on(v); ok {
		return r, nil
	}
	q := p.Quad
	for k := range q {
		q[k].X -= float64(v.photo.Min.X)
		q[k].Y -= float64(v.photo.Min.Y)
	}
	r, err := readQuad(ctx, v, q)
	if err != nil {
		return reading{}, err
	}
	p.own = ownReading{read: readOf([]textrec.Reading{r}), view: v.key(), done: true}
	return p.own.read, nil
}

// ownReading is a plate's reading on its own quad and the view it was read
// on. The studio finds plates in the JPEG's blocks (DetectIn) and reads
// them on the decoded photo (ReadPlates), whose pixels may differ a little:
// a reading is reused only on the view it was read on.
type ownReading struct {
	read reading
	view viewKey
	done bool
}

// on returns the reading where it was read on v.
func (o ownReading) on(v view) (reading, bool) {
	if !o.done || !o.view.same(v.key()) {
		return reading{}, false
	}
	return o.read, true
}

// viewKey is what names a view: the photo's bounds and the image or
// Source read.
type viewKey struct {
	photo image.Rectangle
	img   image.Image
	src   Source
}

func (v view) key() viewKey { return viewKey{v.photo, v.img, v.src} }

// same reports whether a and b name the same view: the same bounds and
// the same image or Source (a pointer to the same one; a value of a type
// that cannot be compared is never the same).
func (a viewKey) same(b viewKey) bool {
	return a.photo == b.photo && sameValue(a.img, b.img) && sameValue(a.src, b.src)
}

func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Type() == vb.Type() && va.Comparable() && va.Equal(vb)
}
