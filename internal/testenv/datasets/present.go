package datasets

import (
	"os"
	"path/filepath"
	"testing"
)

// Present reports whether the shared set name is here, for a test that
// checks behaviour on the shipped samples (docs/samples) everywhere and on
// the set's photos too where they are. With CARPHOTO_REQUIRE_DATASETS=1 a
// missing set fails tb, as Set does.
func Present(tb testing.TB, name string) bool {
	tb.Helper()
	dir := filepath.Join(Dir(), name)
	if _, err := os.Stat(dir); err != nil {
		if Required() {
			tb.Fatalf("shared data set %s not found at %s; CARPHOTO_REQUIRE_DATASETS=1 makes a missing set fail", name, dir)
		}
		return false
	}
	return true
}
