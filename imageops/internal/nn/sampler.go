//go:build measure

package nn

import "slices"

// The calibration's recorder, for the measure-tagged TestCalibrate of each
// network's room, which writes its calibration.go (nn/calibration).

// Add widens r to hold the values of p.
func (r *Range) Add(p []float32) {
	for _, v := range p {
		r.Lo, r.Hi = min(r.Lo, v), max(r.Hi, v)
	}
}

// Sampler records every 61st input of each channel of a layer (and the
// range of all, and of each channel), for calibration.
type Sampler struct {
	All   Range
	Chans []Range // each channel's range, widened to hold 0
	Vals  [][]float32
	n     []int
}

// Add records the channels' values.
func (s *Sampler) Add(planes [][]float32) {
	for len(s.Vals) < len(planes) {
		s.Vals, s.n, s.Chans = append(s.Vals, nil), append(s.n, 0), append(s.Chans, Range{})
	}
	for c, p := range planes {
		s.All.Add(p)
		s.Chans[c].Add(p)
		for ; s.n[c] < len(p); s.n[c] += 61 {
			s.Vals[c] = append(s.Vals[c], p[s.n[c]])
		}
		s.n[c] -= len(p)
	}
}

// Clip returns the range of all channels' samples leaving out the share
// q at each end (all values for q = 0), widened to hold 0.
func (s *Sampler) Clip(q float64) Range {
	if q == 0 {
		return Range{Lo: min(s.All.Lo, 0), Hi: max(s.All.Hi, 0)}
	}
	var v []float32
	for _, c := range s.Vals {
		v = append(v, c...)
	}
	slices.Sort(v)
	k := int(q * float64(len(v)))
	return Range{Lo: min(v[k], 0), Hi: max(v[len(v)-1-k], 0)}
}
