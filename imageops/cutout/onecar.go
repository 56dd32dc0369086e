package cutout

// oneCarKeep is the KeepBlobs value from which the clean-up keeps one car:
// the main blob alone (the mask is the one car, not everything salient).
const oneCarKeep = 1

// mainBlob returns the label of the blob that is the photo's car among the
// opened mask's blobs (labels and sizes from components, w×h): the one with
// the largest size times centrality, where centrality falls from 1 at the
// frame's centre to 0.25 at its corners (by the blob's centroid), so a
// second car at the edge of the frame loses to the one in the middle unless
// it is much larger. -1 when there is no blob. internal/testenv/datasets.MainCar
// picks a label's car by the same rule.
func mainBlob(labels []int32, sizes []int, w, h int) int {
	if len(sizes) == 0 {
		return -1
	}
	sx, sy := make([]float64, len(sizes)), make([]float64, len(sizes))
	for i, l := range labels {
		if l >= 0 {
			sx[l] += float64(i % w)
			sy[l] += float64(i / w)
		}
	}
	best, bestScore := -1, -1.0
	for l, n := range sizes {
		dx := (sx[l]/float64(n) + 0.5 - float64(w)/2) / (float64(w) / 2)
		dy := (sy[l]/float64(n) + 0.5 - float64(h)/2) / (float64(h) / 2)
		score := float64(n) * (1 - 0.375*(dx*dx+dy*dy))
		if score > bestScore {
			best, bestScore = l, score
		}
	}
	return best
}
