package plates

import (
	"cmp"
	"context"
	"image"
	"slices"
)

// Lettering is left alone. A make's or model's name, a badge, a dealer's
// sticker, "POLICE" on a boot lid: a word of letters on a car's body looks
// to the verifiers much like a plate (they score such words 0.76 to 0.97),
// and hiding it marks a photo for nothing. So a found plate the verifiers
// are not sure of (a score under wordSure, the design rule's bar for a
// word) is read on its quad, and where it reads as a word — letters
// alone, at least wordLetters of them, no digit, read with a mean
// confidence of at least wordMean — it is not a plate. A plate the
// verifiers are sure of is hidden whatever it reads (a vanity plate), and
// what reads next to nothing, or with a digit, stays hidden.
//
// On the validation photos of the four sets (the detections TestDesignDump
// wrote, 1,185 of them, 192 on nothing labelled) this leaves 27 words
// alone — "POLICE" twice, "NISSAN", "TOYOTA", "ISUZU", "MITSUBISHI",
// "MIDAS", "Citybus", a bus maker's name, shop signs, stock-photo
// watermarks — and hides one plate fewer: a plate already painted over,
// whose paint the reader reads as 20 letters. At a mean of 0.8 it left 32
// alone and lost 3 plates (two vanity-like plates, "M5-CARBON" and "JUL
// 5IN"); with 3 letters enough, 31 and 2 (a dash-cam plate read "AGO").
const (
	wordLetters = 4
	wordMean    = 0.9
	// maxWordReads bounds the reads a photo (about 7–13 ms of one core
	// each): the least sure plates are read first, the rest stay hidden.
	// On the validation photos 2 in 3 photos with a detection have at most
	// one under wordSure, and none more than six.
	maxWordReads = 3
)

// leaveLettering returns found, in its order, less the plates that read as
// a word (above), read on v, the least sure first, at most maxWordReads.
func leaveLettering(ctx context.Context, v view, found []Plate) ([]Plate, error) {
	var unsure []int
	for i, p := range found {
		if p.Score < wordSure {
			unsure = append(unsure, i)
		}
	}
	if len(unsure) == 0 {
		return found, nil
	}
	slices.SortStableFunc(unsure, func(a, b int) int { return cmp.Compare(found[a].Score, found[b].Score) })
	word := make([]bool, len(found))
	for _, i := range unsure[:min(len(unsure), maxWordReads)] {
		r, err := readOwnQuad(ctx, v, &found[i])
		if err != nil {
			return nil, err
		}
		word[i] = isWord(r)
	}
	kept := found[:0:0]
	for i, p := range found {
		if !word[i] {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

// isWord reports whether a reading is a word: letters alone, at least
// wordLetters of them, read with a mean confidence of at least wordMean.
func isWord(r reading) bool {
	return r.digits == 0 && r.letters >= wordLetters && r.mean >= wordMean
}

// found is the plates of judged (Judging.plates) on the photo v of bounds
// b, less the lettering among them where j reads (j.Read).
func (j Judging) found(ctx context.Context, v view, judged []verified, b image.Rectangle) ([]Plate, error) {
	found := j.plates(judged, b)
	if !j.Read {
		return found, nil
	}
	return leaveLettering(ctx, v, found)
}
