//go:build groundcheck

package shadow

import "image"

// Floor is where a cut-out car meets the ground, as CarShadow finds it
// from the matte alone: the tyres' contact points and the floor line
// through them. train/shadow measures it against hand-drawn masks.
type Floor struct{ g ground }

// FindFloor finds the floor under car. ok is false when the matte has no
// solid pixel.
func FindFloor(car *image.NRGBA) (f Floor, ok bool) {
	g, ok := findGround(car)
	return Floor{g}, ok
}

// Contacts is the x of each tyre's contact with the floor, left to right,
// in pixels from car's Min.
func (f Floor) Contacts() []float64 {
	xs := make([]float64, len(f.g.contacts))
	for i, c := range f.g.contacts {
		xs[i] = c.x
	}
	return xs
}

// At is the floor's y at x, in pixels from car's Min: the line through the
// contacts, continued past the outer tyres.
func (f Floor) At(x float64) float64 { return f.g.at(x) }
