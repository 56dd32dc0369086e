//go:build platestune

package tune

import (
	"carphoto/internal/testenv/datasets"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"carphoto/train/plates/labelled"
)

// TestListCopies writes imageops/plates/testdata/copies.json: the groups of photos of
// each plate set that are copies of one another (Fingerprint: the same
// photo under several names, frames a moment apart), whatever their split.
// The training programs' --drop-copies leaves out the training photos with
// a copy among the validation or held-out photos, and PLATES_COPYFREE=1
// makes the tuning tools score only photos with no copy in another split.
//
//	go test -tags platestune -run TestListCopies ./train/plates/tune/
func TestListCopies(t *testing.T) {
	type group struct {
		Set   string   `json:"set"`
		Files []string `json:"files"`
	}
	var groups []group
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		photos := labelled.Photos(t, set, func(string) bool { return true })
		prints := make([]*datasets.Fingerprint, len(photos))
		for i, p := range photos {
			prints[i] = datasets.FingerprintOf(p.Img)
		}
		// Union-find over the pairs that are copies.
		parent := make([]int, len(photos))
		for i := range parent {
			parent[i] = i
		}
		var root func(int) int
		root = func(i int) int {
			for parent[i] != i {
				parent[i] = parent[parent[i]]
				i = parent[i]
			}
			return i
		}
		for i := range prints {
			for j := i + 1; j < len(prints); j++ {
				if prints[i].Copies(prints[j]) {
					parent[root(j)] = root(i)
				}
			}
		}
		members := map[int][]string{}
		var roots []int
		for i, p := range photos {
			r := root(i)
			if members[r] == nil {
				roots = append(roots, r)
			}
			members[r] = append(members[r], p.File)
		}
		n := 0
		for _, r := range roots {
			if len(members[r]) > 1 {
				groups = append(groups, group{set, members[r]})
				n++
			}
		}
		t.Logf("%s: %d photos, %d groups of copies", set, len(photos), n)
	}
	out, err := json.MarshalIndent(groups, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(labelled.PlatesTestdata, "copies.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
