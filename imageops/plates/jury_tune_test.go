//go:build platestune

package plates

import (
	"os"
	"strconv"
	"strings"
)

// PLATES_JURY=a.bin,b.bin,... replaces the embedded verifiers with these
// files, in this order, so the tuning tool can judge another jury without
// rebuilding the weights into the binary. PLATES_ACCEPT=t makes the tools
// that judge at the shipped point (TestPlateless, TestRotationSweep,
// TestReach) accept at t instead, for a jury whose threshold is not 0.7;
// PLATES_ACCEPT_FINE=t likewise for a plate only the fine look proposed.
func init() {
	if s := os.Getenv("PLATES_ACCEPT"); s != "" {
		t, err := strconv.ParseFloat(s, 64)
		if err != nil || !(t > 0 && t < 1) {
			panic("PLATES_ACCEPT=" + s + ": want a threshold in (0, 1)")
		}
		tuned.accept = t
	}
	if s := os.Getenv("PLATES_ACCEPT_FINE"); s != "" {
		t, err := strconv.ParseFloat(s, 64)
		if err != nil || !(t > 0 && t < 1) {
			panic("PLATES_ACCEPT_FINE=" + s + ": want a threshold in (0, 1)")
		}
		tuned.acceptFine = t
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
