//go:build cutouttune

package tune

// The studio sheet's photos (issue 70, item 6), fixed before any training
// on new data: 24 photos of plates-web-cc0 (CC0; whole-car web photos the
// cut-out never learnt from or was tuned on), from its held-out split, in
// the order of fnv32a of the file name, a photo left out when it is a copy
// of one picked before (the set holds the same photo under several names).
//
//	go test -tags cutouttune -run TestPickStudioSheet -v ./train/cutout/tune/ > train/cutout/heldout.txt

import (
	"carphoto/internal/testenv/datasets"
	"fmt"
	"hash/fnv"
	"image/jpeg"
	"os"
	"path"
	"path/filepath"
	"sort"
	"testing"
)

func TestPickStudioSheet(t *testing.T) {
	dir := datasets.Set(t, "plates-web-cc0")
	photos := datasets.Labels(t, "plates-web-cc0", datasets.HeldOut, -1)
	hash := func(name string) uint32 {
		h := fnv.New32a()
		h.Write([]byte(path.Base(name)))
		return h.Sum32()
	}
	sort.Slice(photos, func(i, j int) bool { return hash(photos[i].File) < hash(photos[j].File) })
	var picked []*datasets.Fingerprint
	fmt.Println("# plates-web-cc0 held-out photos for the studio sheet (issue 70): see heldout_test.go")
	for _, p := range photos {
		if len(picked) == 24 {
			break
		}
		f, err := os.Open(filepath.Join(dir, p.File))
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		fp := datasets.FingerprintOf(img)
		if fp.CopiedIn(picked) {
			continue
		}
		picked = append(picked, fp)
		fmt.Printf("plates-web-cc0/%s\n", p.File)
	}
}
