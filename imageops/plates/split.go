package plates

import (
	"hash/fnv"
	"path"
)

// HeldOut reports whether a labelled photo (by file name) belongs to the
// fixed held-out split that training and tuning never touch: fnv32a of the
// base name mod 5 is 0. The renderer's tests share it.
func HeldOut(name string) bool { return splitHash(name)%5 == 0 }

// Validation reports whether a photo belongs to the tuning split inside the
// non-held-out photos (mod 5 is 1), on which thresholds and margins were set.
func Validation(name string) bool { return splitHash(name)%5 == 1 }

func splitHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(path.Base(name)))
	return h.Sum32()
}
