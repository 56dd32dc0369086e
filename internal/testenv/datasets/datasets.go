// Package datasets is what the tests, the bench commands and the train/
// tools share about the labelled photos: where the sets are
// (CARPHOTO_DATASETS, CARPHOTO_EXTRA_DATA), what happens when one is
// missing (CARPHOTO_REQUIRE_DATASETS), the fixed splits every set uses, the
// copies among photos, and the scores of a cut-out against its label. No
// product package imports it.
package datasets

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the folder of the shared labelled sets: CARPHOTO_DATASETS when
// set, else ../shared/datasets beside the repository's root (found from
// this file's place, so a test of any package gets the same answer).
func Dir() string {
	if d := os.Getenv("CARPHOTO_DATASETS"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), "..", "shared", "datasets")
}

// ExtraDir is the folder of the larger sets that
// ../shared/datasets/extra/build.py builds: CARPHOTO_EXTRA_DATA when set,
// else ~/carphoto-data.
func ExtraDir() string {
	if d := os.Getenv("CARPHOTO_EXTRA_DATA"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "carphoto-data"
	}
	return filepath.Join(home, "carphoto-data")
}

// Required reports whether a missing shared set fails the test that needs
// it instead of skipping it (CARPHOTO_REQUIRE_DATASETS=1, as CI sets).
func Required() bool { return os.Getenv("CARPHOTO_REQUIRE_DATASETS") == "1" }

// Set returns the folder of the shared set name ("cars-seg",
// "plates-web-cc0", …). Where it is missing the test skips, saying where it
// looked, or fails so with CARPHOTO_REQUIRE_DATASETS=1.
func Set(tb testing.TB, name string) string {
	tb.Helper()
	dir := filepath.Join(Dir(), name)
	if _, err := os.Stat(dir); err != nil {
		missing(tb, "shared data set %s not found at %s (CARPHOTO_DATASETS names the folder of the shared sets: README.md, \"Data sets\")", name, dir)
	}
	CheckShipped(tb, name, dir)
	return dir
}

// File returns the path of a file inside the shared set name, as Set does
// for the set: rel is the path within the set ("images/cars-seg-0000.jpg").
func File(tb testing.TB, name, rel string) string {
	tb.Helper()
	path := filepath.Join(Set(tb, name), rel)
	if _, err := os.Stat(path); err != nil {
		missing(tb, "shared data set %s has no %s (CARPHOTO_DATASETS names the folder of the shared sets: README.md, \"Data sets\")", name, rel)
	}
	return path
}

// ReadFile returns the bytes of a file inside the shared set name.
func ReadFile(tb testing.TB, name, rel string) []byte {
	tb.Helper()
	data, err := os.ReadFile(File(tb, name, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// Extra returns the folder of an extra set ("plates-openimages",
// "plates-openlpr"). CI does not build them: a missing one always skips,
// saying how to build it.
func Extra(tb testing.TB, name string) string {
	tb.Helper()
	dir := filepath.Join(ExtraDir(), name)
	if _, err := os.Stat(filepath.Join(dir, "labels.json")); err != nil {
		tb.Skipf("extra data set %s not built at %s (CARPHOTO_EXTRA_DATA names the folder of the extra sets: README.md, \"Data sets\")", name, dir)
	}
	CheckShipped(tb, name, dir)
	return dir
}

func missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if Required() {
		tb.Fatalf(format+"; CARPHOTO_REQUIRE_DATASETS=1 makes a missing set fail", args...)
	}
	tb.Skipf(format, args...)
}

// repoRoot is the repository's root: three folders above this file.
func repoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
