//go:build platestune

package plates

import (
	"os"
	"strconv"
	"strings"
)

// PLATES_WEIGHTS=w.bin replaces the embedded first stage with that file.
// PLATES_JURY=a.bin,b.bin,... replaces the embedded verifiers with these
// files, in this order, so the tuning tool can judge another jury without
// rebuilding the weights into the binary. PLATES_ACCEPT=t makes the tools
// that judge at the shipped point (TestPlateless, TestRotationSweep,
// TestReach) accept at t instead, for a jury whose threshold is not 0.7;
// PLATES_PROPOSE=t sets the first stage's proposal threshold (tuning.propose),
// PLATES_RELOOK=l judges again, around the refined box, each proposal of
// jury log-odds ≥ l (+Inf: none); PLATES_RELOOK_MODE=mean takes the mean
// of both looks, =replace the second's. PLATES_CONTEXT=c.bin,... adds
// context verifiers (verifier.py --context), PLATES_CONTEXT_WEIGHT their
// share of the log-odds, PLATES_CONTEXT_FROM the score from which it is asked.
func init() {
	threshold("PLATES_ACCEPT", &tuning.judge.accept)
	threshold("PLATES_PROPOSE", &tuning.propose.threshold)
	weight("PLATES_WITHIN", &tuning.judge.within)
	if s := os.Getenv("PLATES_RELOOK"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			panic("PLATES_RELOOK=" + s + ": want a log-odds")
		}
		tuning.relook.from = v
	}
	if s := os.Getenv("PLATES_RELOOK_MODE"); s != "" {
		tuning.relook.mean = s == "mean"
	}
	if s := os.Getenv("PLATES_WORKSIDE"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 320 || v%32 != 0 {
			panic("PLATES_WORKSIDE=" + s + ": want a multiple of 32 from 320")
		}
		tuning.workSide = v
	}
	if s := os.Getenv("PLATES_RELOOKS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			panic("PLATES_RELOOKS=" + s + ": want a count")
		}
		tuning.relook.times = v
	}
	if os.Getenv("PLATES_FLIP") != "" {
		tuning.relook.flip = os.Getenv("PLATES_FLIP") == "1"
	}
	if files := os.Getenv("PLATES_CONTEXT"); files != "" {
		for _, f := range strings.Split(files, ",") {
			data, err := os.ReadFile(f)
			if err != nil {
				panic(err)
			}
			contextBins = append(contextBins, data)
		}
		weight("PLATES_CONTEXT_WEIGHT", &tuning.contextWeight)
		threshold("PLATES_CONTEXT_FROM", &tuning.contextFrom)
	}
	if f := os.Getenv("PLATES_WEIGHTS"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		weightsBin = data
	}
	files := os.Getenv("PLATES_JURY")
	if files == "" {
		return
	}
	juryBins = nil
	for _, f := range strings.Split(files, ",") {
		data, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		juryBins = append(juryBins, data)
	}
}

// weight sets *w, a share in [0, 1], from the environment variable name,
// if set.
func weight(name string, w *float64) {
	fromEnv(name, w, "a weight in [0, 1]", func(v float64) bool { return v >= 0 && v <= 1 })
}

// threshold sets *t, a probability in (0, 1), from the environment
// variable name, if set.
func threshold(name string, t *float64) {
	fromEnv(name, t, "a threshold in (0, 1)", func(v float64) bool { return v > 0 && v < 1 })
}

// fromEnv sets *p from the environment variable name, if set, panicking
// with what it wants when the value is not a number ok accepts.
func fromEnv(name string, p *float64, want string, ok func(float64) bool) {
	s := os.Getenv(name)
	if s == "" {
		return
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !ok(v) {
		panic(name + "=" + s + ": want " + want)
	}
	*p = v
}
