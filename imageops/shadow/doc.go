// Package shadow puts a cut-out car on its ground: it finds where the car
// meets the floor, paints its contact shadow and, when asked, its floor
// reflection, and frames the result on a canvas (crop, padding, aspect).
package shadow
