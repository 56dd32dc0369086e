package datasets

import (
	"encoding/json"
	"testing"
)

// Labelled is an entry of a shared set's labels.json: the photo's path
// within the set and, on the plate sets, its labelled plates' boxes.
type Labelled struct {
	File   string
	Plates []struct{ X, Y, W, H float64 }
}

// Labels returns the entries of the shared set name's labels.json whose
// file names pass keep (HeldOut, Validation, Training), at most n, in the
// file's order (the sets list their photos by name).
func Labels(tb testing.TB, name string, keep func(string) bool, n int) []Labelled {
	tb.Helper()
	var all []Labelled
	if err := json.Unmarshal(ReadFile(tb, name, "labels.json"), &all); err != nil {
		tb.Fatalf("%s: labels.json: %v", name, err)
	}
	var out []Labelled
	for _, l := range all {
		if len(out) == n {
			break
		}
		if keep(l.File) {
			out = append(out, l)
		}
	}
	return out
}
