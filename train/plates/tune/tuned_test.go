//go:build platestune

package tune

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"carphoto/imageops/plates"
)

// tuned are the networks and settings the tuning tools run: the embedded
// networks at plates.DefaultSettings(), with these variables applied.
//
// PLATES_WEIGHTS=w.bin replaces the embedded first stage with that file.
// PLATES_JURY=a.bin,b.bin,... replaces the embedded verifiers with these
// files, in this order, so the tuning tool can judge another jury without
// rebuilding the weights into the binary. PLATES_ACCEPT=t makes the tools
// that judge at the shipped point (TestPlateless, TestRotationSweep,
// TestReach) accept at t instead, for a jury whose threshold is not 0.7;
// PLATES_PROPOSE=t sets the first stage's proposal threshold
// (Settings.Propose), PLATES_RELOOK=l judges again, around the refined
// box, each proposal of jury log-odds ≥ l (+Inf: none);
// PLATES_RELOOK_MODE=mean takes the mean of both looks, =replace the
// second's. PLATES_WORKSIDE,
// PLATES_RELOOKS, PLATES_FLIP and PLATES_WITHIN set the rest of
// plates.Settings.
//
// It reads them from within a test: go test records only the variables
// (and files) a test reads in its cache key, so a run with another
// PLATES_JURY is not answered from the cache.
func tuned(tb testing.TB) (*plates.Stages, plates.Settings) {
	tb.Helper()
	s := plates.DefaultSettings()
	threshold(tb, "PLATES_ACCEPT", &s.Judge.Accept)
	threshold(tb, "PLATES_PROPOSE", &s.Propose.Threshold)
	weight(tb, "PLATES_WITHIN", &s.Judge.Within)
	if v := os.Getenv("PLATES_RELOOK"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			tb.Fatalf("PLATES_RELOOK=%s: want a log-odds", v)
		}
		s.Relook.From = f
	}
	if v := os.Getenv("PLATES_RELOOK_MODE"); v != "" {
		s.Relook.Mean = v == "mean"
	}
	if v := os.Getenv("PLATES_WORKSIDE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 320 || n%32 != 0 {
			tb.Fatalf("PLATES_WORKSIDE=%s: want a multiple of 32 from 320", v)
		}
		s.WorkSide = n
	}
	if v := os.Getenv("PLATES_RELOOKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			tb.Fatalf("PLATES_RELOOKS=%s: want a count", v)
		}
		s.Relook.Times = n
	}
	if v := os.Getenv("PLATES_FLIP"); v != "" {
		s.Relook.Flip = v == "1"
	}
	var nw plates.Networks
	if f := os.Getenv("PLATES_WEIGHTS"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		nw.First = data
	}
	if files := os.Getenv("PLATES_JURY"); files != "" {
		nw.Jury = readAll(tb, files)
	}
	st, err := plates.NewStages(nw)
	if err != nil {
		tb.Fatal(err)
	}
	return st, s
}

// readAll reads the comma-separated files.
func readAll(tb testing.TB, files string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, f := range strings.Split(files, ",") {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// weight sets *w, a share in [0, 1], from the environment variable name,
// if set.
func weight(tb testing.TB, name string, w *float64) {
	tb.Helper()
	fromEnv(tb, name, w, "a weight in [0, 1]", func(v float64) bool { return v >= 0 && v <= 1 })
}

// threshold sets *t, a probability in (0, 1), from the environment
// variable name, if set.
func threshold(tb testing.TB, name string, t *float64) {
	tb.Helper()
	fromEnv(tb, name, t, "a threshold in (0, 1)", func(v float64) bool { return v > 0 && v < 1 })
}

// fromEnv sets *p from the environment variable name, if set, failing
// with what it wants when the value is not a number ok accepts.
func fromEnv(tb testing.TB, name string, p *float64, want string, ok func(float64) bool) {
	tb.Helper()
	s := os.Getenv(name)
	if s == "" {
		return
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !ok(v) {
		tb.Fatalf("%s=%s: want %s", name, s, want)
	}
	*p = v
}
